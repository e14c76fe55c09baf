import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import type { Agent } from '@dsh/agent'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { appDir, bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { eventually, outsideDir, processesWith, tempDir } from '@dsh/test-harness/world'
import type {} from './index.ts'

// The parent runs on the scripted model; each child's turn runs in a real `dsh --profile acp` process (the
// built launcher) whose model is the mock DeepSeek server.
let llm: MockServer
let h: Harness | undefined
let remotePatchFile = ''
beforeAll(async () => {
  llm = await startMockServer()
})
afterEach(async () => {
  await h?.dispose()
  h = undefined
  llm.reset()
})
afterAll(() => llm.close())

async function boot(): Promise<Harness> {
  const remotePatch = `- id: agents
  config: { route: { provider: deepseek, model: deepseek-v4-flash } }
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-retry
  config: { maxRetries: 0 }
`
  const rows = `- id: subagents
  name: '@dsh/subagent-acp'
  config:
    command: ['${process.execPath}', '${join(appDir, 'bin', 'dsh.js')}', '--profile', 'acp', '--patch', '$REMOTE_PATCH']
`
  const file = (remotePatchFile = join(tempDir('dsh-acp-remote-'), 'remote.patch.yml'))
  writeFileSync(file, remotePatch)
  h = await bootComposition({ patch: scriptedPatch({}, rows.replace('$REMOTE_PATCH', file)) })
  await h.root.credentials.set('DEEPSEEK_API_KEY', 'sk-test-acp-child-0123456789')
  return h
}

const childOf = (parent: Agent): Agent => [...parent.children][0]!

test('an ACP child runs its turn in `dsh acp`; its updates are logged in the child and its answer is the result', async () => {
  await boot()
  llm.enqueue({ text: 'hello from the ACP child' })
  h!.root.scriptedLlm.enqueue(toolCall('t1', 'task', { description: 'ask acp', prompt: 'say hello' }), {
    text: 'relayed',
  })
  expect(await h!.run('delegate')).toMatchObject({ reason: 'completed', text: 'relayed' })
  const child = childOf(await h!.agent())
  expect(h!.toolText('t1')).toContain('hello from the ACP child')
  const updates = child.session.events
    .filter((event) => event.type === 'subagent/acp-update')
    .map((event) => (event.data as { update: { sessionUpdate: string } }).update.sessionUpdate)
  expect(updates).toContain('agent_message_chunk')
  expect(child.session.last('turn/end')?.data).toMatchObject({ reason: 'completed' })
  expect(child.session.last('subagent/parent')?.data).toMatchObject({ kind: 'acp' })
  expect(JSON.stringify(llm.requests[0]!.body.messages)).toContain('say hello')
  expect(processesWith(remotePatchFile)).toHaveLength(1)
  await h!.dispose()
  h = undefined
  // The agent process ends with its child's scope: nothing is left running.
  expect(await eventually(() => processesWith(remotePatchFile).length === 0, 30_000)).toBe(true)
})

test('an ACP child runs in the mode of its ceiling and cannot write outside the workspace, whoever answers for the parent', async () => {
  const target = join(outsideDir(), 'pwned.txt')
  await boot()
  const parent = await h!.agent()
  h!.root.sandboxPolicy.setMode(parent.session, 'danger-full-access', 'user:cli-flag')
  h!.root.approval.answerer(h!.root, async () => 'allow_once', { actor: 'user:cli-flag' })
  llm.enqueue(
    { toolCalls: [{ id: 'w1', name: 'write', arguments: { path: target, content: 'pwned' } }] },
    { text: 'I could not write it' },
  )
  h!.root.scriptedLlm.enqueue(toolCall('t1', 'task', { description: 'escape', prompt: 'write outside' }), {
    text: 'ok',
  })
  await h!.run('go')
  const child = childOf(parent)
  expect(existsSync(target)).toBe(false)
  expect(h!.root.sandboxPolicy.ceiling(child.session)).toBe('workspace-write')
  // The remote dsh asked for permission; the child's log shows it refused by the ceiling.
  const decided = child.session.events
    .filter((event) => event.type === 'approval/decided')
    .map((event) => event.data as { answer: string; note?: string })
  expect(decided).toHaveLength(1)
  expect(decided[0]).toMatchObject({ answer: 'reject', by: 'policy' })
  expect(decided[0]!.note).toContain('ceiling workspace-write')
  // The remote's model was told its write was not approved.
  expect(JSON.stringify(llm.requests[1]!.body.messages)).toContain('not approved')
  expect(h!.toolText('t1')).toContain('I could not write it')
})
