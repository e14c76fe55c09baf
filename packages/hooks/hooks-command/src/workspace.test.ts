import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import type { ApprovalAnswer, ApprovalRequest } from '@dsh/approval'
import { toolCall, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { boot, hooksFile, requestText } from './test-support/hooks.ts'

/** Answers every approval with `answer` (as a web tab would) and records what was asked. */
function answering(h: Harness, answer: ApprovalAnswer): ApprovalRequest[] {
  const asked: ApprovalRequest[] = []
  h.root.approval.answerer(h.root, async (request) => (asked.push(request), answer), { actor: 'user:web-tab' })
  return asked
}

const MARKER_HOOK = hooksFile({ UserPromptSubmit: [{ command: 'echo ran >> "$CLAUDE_PROJECT_DIR/ran.txt"' }] })
const runs = (workspace: string) =>
  existsSync(join(workspace, 'ran.txt'))
    ? readFileSync(join(workspace, 'ran.txt'), 'utf8').split('\n').filter(Boolean).length
    : 0

describe("a workspace's hooks", () => {
  test('do not run before the user approves them: nobody to ask is a refusal, logged with the exact rule', async () => {
    const h = await boot({ workspaceFiles: { '.claude/settings.json': MARKER_HOOK } })
    h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' })
    await h.run('first')
    await h.run('second')
    expect(runs(h.workspace)).toBe(0)
    expect(h.events('hook/run')).toHaveLength(0)
    const asked = h.events('approval/asked')
    expect(asked).toHaveLength(1) // asked once per session, not at every event
    expect(asked[0]!.data).toMatchObject({
      tool: 'hooks',
      summary: 'run the hooks of .claude/settings.json (1 command)',
    })
    expect(asked[0]!.data.rule).toMatch(/^hooks\(sha256:[0-9a-f]{64}\)$/)
    expect(asked[0]!.data.reason).toContain('UserPromptSubmit: echo ran >> "$CLAUDE_PROJECT_DIR/ran.txt"')
    expect(h.events('approval/decided')[0]!.data).toMatchObject({ answer: 'reject', by: 'no-answerer' })
  })

  test('approved always, they run in later sessions without a question — until the file changes', async () => {
    const home = tempDir('dsh-home-')
    const workspace = tempDir('dsh-ws-')
    const first = await boot({ home, workspace, workspaceFiles: { '.dsh/hooks.json': MARKER_HOOK } })
    const asked = answering(first, 'allow_always')
    first.root.scriptedLlm.enqueue({ text: 'one' })
    await first.run('first')
    expect(runs(workspace)).toBe(1)
    expect(asked).toHaveLength(1)
    expect(readFileSync(join(home, 'grants.yaml'), 'utf8')).toContain(asked[0]!.rule!)
    await first.dispose()

    const second = await boot({ home, workspace }) // no answerer: the held grant answers
    second.root.scriptedLlm.enqueue({ text: 'two' }, { text: 'three' })
    await second.run('second')
    expect(runs(workspace)).toBe(2)
    expect(second.events('approval/decided')[0]!.data).toMatchObject({ answer: 'allow_once', by: 'grant' })

    writeFileSync(
      join(workspace, '.dsh/hooks.json'),
      hooksFile({ UserPromptSubmit: [{ command: 'echo ran >> "$CLAUDE_PROJECT_DIR/ran.txt"; echo changed' }] }),
    )
    await second.run('third')
    expect(runs(workspace)).toBe(2) // the changed hooks are asked about again, and nobody answers
    const rules = second.events('approval/asked').map((event) => event.data.rule)
    expect(rules).toHaveLength(2)
    expect(rules[1]).not.toBe(rules[0])
  })

  test('attack: the model cannot plant a hooks file for later turns (.claude and .dsh are read-only to it)', async () => {
    const h = await boot()
    const planted = MARKER_HOOK.replace(/'/g, "'\\''")
    h.root.scriptedLlm.enqueue(
      toolCall('dsh', 'bash', { command: `mkdir -p .dsh && printf '%s' '${planted}' > .dsh/hooks.json` }),
      toolCall('claude', 'bash', { command: `mkdir -p .claude && printf '%s' '${planted}' > .claude/settings.json` }),
      { text: 'planted' },
      { text: 'next turn' },
    )
    await h.run('plant')
    await h.run('next')
    expect(h.toolText('dsh')).toContain('Read-only file system')
    expect(h.toolText('claude')).toContain('Read-only file system')
    expect(existsSync(join(h.workspace, '.dsh/hooks.json'))).toBe(false)
    expect(existsSync(join(h.workspace, '.claude/settings.json'))).toBe(false)
    expect(runs(h.workspace)).toBe(0)
    expect(h.events('hook/run')).toHaveLength(0)
  })

  test("the user's own hooks run while the workspace's wait for approval", async () => {
    const h = await boot({
      homeFiles: { 'hooks.json': hooksFile({ UserPromptSubmit: [{ command: 'echo "from the user"' }] }) },
      workspaceFiles: {
        '.claude/settings.json': hooksFile({ UserPromptSubmit: [{ command: 'echo "from the workspace"' }] }),
      },
    })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('go')
    expect(requestText(h, 0)).toContain('from the user')
    expect(requestText(h, 0)).not.toContain('from the workspace')
    expect(h.events('hook/run').map((event) => event.data.origin)).toEqual(['user'])
  })
})

describe('a Claude Code hooks setup (examples/claude-code)', () => {
  const example = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'claude-code')

  test('works unchanged once approved: it blocks a dangerous command, denies a lock file edit and adds context after an edit', async () => {
    const workspace = tempDir('dsh-ws-')
    cpSync(example, workspace, { recursive: true })
    writeFileSync(join(workspace, 'package-lock.json'), '{}\n')
    writeFileSync(join(workspace, 'keep.txt'), 'keep\n')
    const h = await boot({ workspace })
    answering(h, 'allow_once')
    h.root.scriptedLlm.enqueue(
      toolCall('rm', 'bash', { command: 'rm -rf keep.txt' }),
      toolCall('lock', 'write', { path: 'package-lock.json', content: '{"hacked":true}' }),
      toolCall('note', 'write', { path: 'notes.md', content: '# notes\n' }),
      { text: 'done' },
    )
    await h.run('tidy up')
    expect(readFileSync(join(workspace, 'keep.txt'), 'utf8')).toBe('keep\n')
    expect(h.toolText('rm')).toContain(
      "Blocked by block-dangerous-bash.sh: 'rm -rf keep.txt' is not allowed in this repository.",
    )
    expect(readFileSync(join(workspace, 'package-lock.json'), 'utf8')).toBe('{}\n')
    expect(h.toolText('lock')).toContain(
      `${join(workspace, 'package-lock.json')} is generated; run the package manager instead`,
    )
    expect(readFileSync(join(workspace, 'notes.md'), 'utf8')).toBe('# notes\n')
    expect(h.toolText('note')).toContain(`Edited ${join(workspace, 'notes.md')}: run npm run format before you finish.`)
    expect(readFileSync(join(workspace, '.edits.log'), 'utf8')).toBe(`Write ${join(workspace, 'notes.md')}\n`)
    expect(h.events('approval/asked').map((event) => event.data.tool)).toEqual(['hooks'])
  })
})
