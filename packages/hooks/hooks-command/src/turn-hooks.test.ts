import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { toolCall } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { boot, hooksFile, requestText } from './test-support/hooks.ts'

const SECRET = 'hooks-test-secret-value-5f2c9a'
afterEach(() => void delete process.env.DSH_HOOKS_TEST_TOKEN)

describe('SessionStart and UserPromptSubmit', () => {
  test('their stdout enters the history as hook context around the prompt, once per session start', async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({
          SessionStart: [{ command: 'echo "branch: main, 2 files changed"' }],
          UserPromptSubmit: [{ command: `jq -r '"you asked: " + .prompt'` }],
        }),
      },
    })
    h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' })
    await h.run('first task')
    await h.run('second task')
    const messages = h
      .events('user/message')
      .map((event) => [event.data.source, (event.data.content[0] as { text: string }).text])
    expect(messages).toEqual([
      ['hook', 'Context from a SessionStart hook:\nbranch: main, 2 files changed'],
      ['user', 'first task'],
      ['hook', 'Context from a UserPromptSubmit hook:\nyou asked: first task'],
      ['user', 'second task'],
      ['hook', 'Context from a UserPromptSubmit hook:\nyou asked: second task'],
    ])
    expect(requestText(h, 0)).toContain('branch: main, 2 files changed')
    expect(h.events('hook/run').map((event) => event.data.event)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'UserPromptSubmit',
    ])
  })

  test('a resumed session starts again with source resume', async () => {
    const home = tempDir('dsh-home-')
    const workspace = tempDir('dsh-ws-')
    const hooks = {
      'hooks.json': hooksFile({ SessionStart: [{ command: 'jq -r .source >> "$CLAUDE_PROJECT_DIR/sources.txt"' }] }),
    }
    const first = await boot({ home, workspace, homeFiles: hooks })
    first.root.scriptedLlm.enqueue({ text: 'one' })
    await first.run('first')
    const id = (await first.agent()).session.id
    await first.dispose()
    const second = await boot({ home, workspace })
    second.root.scriptedLlm.enqueue({ text: 'two' })
    const agent = await second.root.agents.resume(id)
    agent.followup('again')
    await agent.whenIdle()
    expect(readFileSync(join(workspace, 'sources.txt'), 'utf8')).toBe('startup\nresume\n')
    await agent.dispose()
  })

  test('a UserPromptSubmit hook that exits 2 blocks the prompt: the turn ends blocked and the model is not called', async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({ UserPromptSubmit: [{ command: 'echo "no secrets in prompts" >&2; exit 2' }] }),
      },
    })
    const result = await h.run('my password is hunter2')
    expect(result.reason).toBe('blocked')
    expect(result.error?.message).toContain('no secrets in prompts')
    expect(h.root.scriptedLlm.requests).toHaveLength(0)
    expect(h.events('user/message')).toHaveLength(0)
  })

  test('attack: a hook runs confined and with the scrubbed environment — it cannot write outside the workspace or read a key', async () => {
    process.env.DSH_HOOKS_TEST_TOKEN = SECRET
    const outside = tempDir('dsh-outside-')
    const command = `touch ${outside}/escaped 2>/dev/null; echo "token=[$DSH_HOOKS_TEST_TOKEN]"; touch "$CLAUDE_PROJECT_DIR/inside"`
    const h = await boot({ homeFiles: { 'hooks.json': hooksFile({ SessionStart: [{ command }] }) } })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('go')
    expect(existsSync(join(outside, 'escaped'))).toBe(false)
    expect(existsSync(join(h.workspace, 'inside'))).toBe(true)
    expect(requestText(h, 0)).toContain('token=[]')
    expect(JSON.stringify(h.events())).not.toContain(SECRET)
  })
})

describe('Stop', () => {
  test('a Stop hook that blocks keeps the turn going once (bounded), with its reason in the log the model reads', async () => {
    const command = `{ cat; echo; } >> "$CLAUDE_PROJECT_DIR/stop.jsonl"; echo '{"decision":"block","reason":"run the tests before you stop"}'`
    const h = await boot({ homeFiles: { 'hooks.json': hooksFile({ Stop: [{ command }] }) } })
    h.root.scriptedLlm.enqueue({ text: 'done' }, { text: 'tests pass, done' }, { text: 'never asked' })
    const result = await h.run('fix it')
    expect(result).toMatchObject({ reason: 'completed', text: 'tests pass, done' })
    expect(h.root.scriptedLlm.requests).toHaveLength(2)
    expect(h.events('turn/start')).toHaveLength(1)
    expect(requestText(h, 1)).toContain('run the tests before you stop')
    expect(h.events('user/message').at(-1)!.data).toMatchObject({
      source: 'hook',
      content: [{ text: 'A Stop hook did not let the turn end yet:\nrun the tests before you stop' }],
    })
    const inputs = readFileSync(join(h.workspace, 'stop.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(inputs.map((input) => [input.hook_event_name, input.stop_hook_active])).toEqual([
      ['Stop', false],
      ['Stop', true],
    ])
    expect(h.events('hook/run').map((event) => event.data.decision)).toEqual(['block', 'block'])
  })

  test('continue: false lets the turn end even when a hook blocks', async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({
          Stop: [{ command: `echo '{"continue":false,"stopReason":"enough","decision":"block","reason":"more"}'` }],
        }),
      },
    })
    h.root.scriptedLlm.enqueue({ text: 'done' })
    expect((await h.run('go')).reason).toBe('completed')
    expect(h.root.scriptedLlm.requests).toHaveLength(1)
  })
})

describe('PreCompact', () => {
  test('runs before a compaction with its trigger and the /compact focus', async () => {
    const h = await boot({
      homeFiles: { 'hooks.json': hooksFile({ PreCompact: [{ command: 'cat > "$CLAUDE_PROJECT_DIR/compact.json"' }] }) },
    })
    h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' }, { text: 'the summary' })
    await h.run('first')
    await h.run('second')
    const result = await h.root.compaction.compact(await h.agent(), { trigger: 'manual', focus: 'keep the API' })
    expect(result.ok).toBe(true)
    expect(JSON.parse(readFileSync(join(h.workspace, 'compact.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'PreCompact',
      trigger: 'manual',
      custom_instructions: 'keep the API',
    })
    expect(h.events('hook/run').map((event) => event.data.event)).toEqual(['PreCompact'])
  })
})

describe('SubagentStop', () => {
  test("runs in the parent's session after a child agent's turn, with the child's session and status", async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({
          SubagentStop: [
            { command: `jq -r '.subagent_status + " " + .subagent_session_id' >> "$CLAUDE_PROJECT_DIR/stops.txt"` },
          ],
        }),
      },
    })
    h.root.scriptedLlm.enqueue(
      toolCall('t1', 'task', { description: 'look around', prompt: 'list the files' }),
      { text: 'child done' },
      { text: 'parent done' },
    )
    await h.run('delegate a look')
    const started = h.events('subagent/start')
    expect(started).toHaveLength(1)
    const child = started[0]!.data.childSessionId
    expect(h.events('hook/run').map((event) => event.data.event)).toEqual(['SubagentStop'])
    expect(readFileSync(join(h.workspace, 'stops.txt'), 'utf8')).toBe(`completed ${child}\n`)
  })
})
