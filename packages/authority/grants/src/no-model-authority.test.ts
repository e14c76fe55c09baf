import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
import type {} from '@dsh/permission-presets'
import { bootComposition, scriptedPatch, toolCall } from '@dsh/test-harness'
import type {} from '@dsh/tools'
import type {} from './index.ts'

/**
 * Every model-facing tool the product mounts, reviewed: none of them reaches ctx.sandboxPolicy.setMode,
 * ctx.permissionPresets.set, ctx.approval.setPolicy or ctx.grants. A new tool fails this test until it is
 * reviewed and added here with a call to run.
 */
const REVIEWED_TOOLS: Record<string, unknown> = {
  bash: { command: 'echo hi' },
  read: { path: 'a.txt' },
  write: { path: 'b.txt', content: 'x' },
  edit: { path: 'a.txt', old_string: 'a', new_string: 'b' },
  glob: { pattern: '*' },
  grep: { pattern: 'a' },
  str_replace_editor: { command: 'view', path: 'a.txt' },
  // Reads skills through ctx.skills under the session's read authority; calls no authority API (tool-skill).
  skill: { name: 'any-skill' },
  // Its child is capped by a `sandbox/ceiling` in the child's own log; it sets no mode, preset, policy or grant.
  task: { description: 'say hi', prompt: 'say hi' },
  // tool-jobs: read and stop the session's own jobs (started by bash, under the session's authority).
  job_output: { job_id: 'job-1' },
  job_list: {},
  job_kill: { job_id: 'job-1' },
  // tool-todo: logs the task list, nothing else.
  todo_write: { todos: [{ content: 'look around', status: 'in_progress', priority: 'high' }] },
  // plan-mode: only ends plan mode (which never changes the authority) after a person approves.
  exit_plan_mode: { plan: 'nothing to do' },
  // tool-memory: proposes an entry a person accepts through ctx.approval.request (no rule, so no grant can be
  // kept); writes only the memory file of its scope under $DSH_HOME, never a setting.
  memory: { scope: 'user', text: 'Prefers tabs' },
  // tool-lsp (offered when a language server's program is on PATH): asks ctx.lsp, reads under the session's
  // authority; its servers run confined read-only. Calls no authority API.
  lsp: { operation: 'documentSymbols', path: 'a.txt' },
}
const AUTHORITY_KINDS = ['sandbox/mode', 'permission/preset', 'approval/policy', 'grant/added', 'grant/revoked']

test.each(['headless', 'sdk', 'web', 'acp'])('no tool the %s profile registers is unreviewed', async (profile) => {
  const h = await bootComposition({ profile, patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  const agent = await h.agent()
  const names = h.root.tools.visible(agent.id).map((tool) => tool.name)
  expect(names).toContain('bash')
  expect(names.filter((name) => !(name in REVIEWED_TOOLS))).toEqual([])
})

test('running every tool the product registers changes no authority: no authority method is called and no authority event is logged', async () => {
  const h = await bootComposition({ patch: scriptedPatch(), workspaceFiles: { 'a.txt': 'a\n' } })
  onTestFinished(() => h.dispose())
  const called: string[] = []
  const spy = (service: any, method: string) => {
    const original = service[method].bind(service)
    service[method] = (...args: unknown[]) => (called.push(method), original(...args))
  }
  spy(h.root.sandboxPolicy, 'setMode')
  spy(h.root.permissionPresets, 'set')
  spy(h.root.approval, 'setPolicy')
  spy(h.root.grants, 'add')
  spy(h.root.grants, 'revoke')
  const agent = await h.agent()
  const names = h.root.tools.visible(agent.id).map((tool) => tool.name)
  // The `task` call's child answers from the next response.
  h.root.scriptedLlm.enqueue(
    ...names.flatMap((name, index) => [
      toolCall(`c${index}`, name, REVIEWED_TOOLS[name]),
      ...(name === 'task' ? [{ text: 'hi' }] : []),
    ]),
    { text: 'done' },
  )
  await h.run('use every tool')
  expect(h.events('tool/result')).toHaveLength(names.length)
  expect(called).toEqual([])
  expect(h.types().filter((type) => AUTHORITY_KINDS.includes(type))).toEqual([])
})
