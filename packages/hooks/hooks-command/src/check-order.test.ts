import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import type {} from '@dsh/approval'
import type {} from '@dsh/sandbox-policy'
import { toolCall } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'
import { boot, hooksFile } from './test-support/hooks.ts'

// Issue #28.2: the order of the checks before a tool call is the pipeline's (PRE_EXECUTE_PHASES of @dsh/tools:
// ceiling, hooks, policy, the tool's own; approval last), not the order in which the rows mounted their
// listeners. Each case runs with the bundle's rows, with the hooks row moved last and with the subagents row
// (the ceiling's) moved last.
const rowOrders = {
  'bundle rows': '',
  'hooks row moved last': `- id: hooks
  disabled: true
- insert:
    - id: hooks-late
      name: '@dsh/hooks-command'
`,
  'subagents row moved last': `- id: subagents
  disabled: true
- id: tool-subagent
  disabled: true
- insert:
    - id: subagents-late
      name: '@dsh/subagent-spawn'
`,
}

const jsonOut = (value: unknown) => `echo '${JSON.stringify(value)}'`

/** A session running danger-full-access under a workspace-write ceiling (what a subagent runs under), whose answerer allows everything. */
async function underCeiling(rows: string, hooks: Record<string, { matcher?: string; command: string }[]>) {
  const h = await boot({ rows, homeFiles: { 'hooks.json': hooksFile(hooks) } })
  const agent = await h.agent()
  h.root.sandboxPolicy.setMode(agent.session, 'danger-full-access', 'user:cli-flag')
  h.root.sandboxPolicy.setCeiling(agent.session, 'workspace-write', 'a test of the check order')
  const asked: unknown[] = []
  h.root.approval.answerer(h.root, async (request) => (asked.push(request), 'allow_once'), { actor: 'user:cli-flag' })
  return { h, asked }
}

describe.each(Object.entries(rowOrders))('with the %s', (_, rows) => {
  test('the ceiling decides before any user hook: a call it refuses runs no hook and asks nobody', async () => {
    const marker = join(outsideDir(), 'hook-ran')
    const outside = join(outsideDir(), 'unconfined.txt')
    const { h, asked } = await underCeiling(rows, { PreToolUse: [{ matcher: 'Bash', command: `touch ${marker}` }] })
    h.root.scriptedLlm.enqueue(
      toolCall('c1', 'bash', { command: `echo pwned > ${outside}`, sandbox: false, justification: 'I need it' }),
      { text: 'ok' },
    )
    await h.run('go')
    expect(h.toolResult('c1').error?.code).toBe('DENIED')
    expect(h.toolResult('c1').error?.message).toContain('ceiling workspace-write')
    expect(existsSync(outside)).toBe(false)
    expect(existsSync(marker)).toBe(false)
    expect(h.events('hook/run')).toHaveLength(0)
    expect(asked).toEqual([])
  })

  test("a hook's rewrite cannot take a call past the ceiling, though the approver would allow it", async () => {
    const outside = join(outsideDir(), 'unconfined.txt')
    const rewrite = jsonOut({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        updatedInput: { command: `echo pwned > ${outside}`, sandbox: false, justification: 'the hook wants it' },
      },
    })
    const { h, asked } = await underCeiling(rows, { PreToolUse: [{ matcher: 'Bash', command: rewrite }] })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'echo harmless' }), { text: 'ok' })
    await h.run('go')
    expect(h.events('hook/updated-input')).toHaveLength(1)
    expect(h.toolResult('c1').error?.code).toBe('DENIED')
    expect(h.toolResult('c1').error?.message).toContain('ceiling workspace-write')
    expect(existsSync(outside)).toBe(false)
    expect(asked).toEqual([])
  })

  test('hooks decide before approval: a hook that denies leaves nothing to ask', async () => {
    const { h, asked } = await underCeiling(rows, {
      PreToolUse: [{ matcher: 'Bash', command: 'echo "no" >&2; exit 2' }],
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt', sandbox: true }), { text: 'ok' })
    await h.run('go')
    expect(h.toolResult('c1').error?.code).toBe('DENIED')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
    expect(asked).toEqual([])
  })
})
