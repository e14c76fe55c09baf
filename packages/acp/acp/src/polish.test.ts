// What an editor shows and what the model reads, through the official ACP client against a real `dsh acp`:
// mentions with their line ranges and titles (and back as links after a load), a cancelled call, an
// editor's own error words, and no output sent twice.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

let llm: MockServer
let agent: AgentProcess
let refusal: string | undefined

beforeAll(async () => {
  llm = await startMockServer()
  agent = await startAgent({
    patch: '[]\n',
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
    capabilities: { terminal: true },
    refuseTerminal: () => refusal,
  })
})
afterEach(() => llm.reset())
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
})

type ToolUpdate = Extract<SessionUpdate, { sessionUpdate: 'tool_call_update' }>
const toolUpdates = (sessionId: string, callId: string) =>
  agent
    .updates(sessionId)
    .filter((u): u is ToolUpdate => u.sessionUpdate === 'tool_call_update' && u.toolCallId === callId)
const newSession = async () =>
  (await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })).sessionId
const calls = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: args }],
})
const textOf = (update: ToolUpdate) => JSON.stringify(update.content ?? [])

test('a selection keeps its line range and a link its title for the model; after a load the editor gets its mentions back as links', async () => {
  const file = join(agent.workspace, 'mention.ts')
  writeFileSync(file, 'one\ntwo\nthree\n')
  const sessionId = await newSession()
  llm.enqueue({ text: 'Seen.' })
  await agent.agent.request('session/prompt', {
    sessionId,
    prompt: [
      { type: 'text', text: 'look at' },
      { type: 'resource_link', uri: `${pathToFileURL(file).href}#L2:3`, name: 'mention.ts', title: 'the middle' },
      { type: 'resource', resource: { uri: `${pathToFileURL(file).href}#L1`, text: 'one' } },
    ],
  })
  const sent = JSON.stringify(llm.requests.at(-1)!.body.messages.at(-1))
  expect(sent).toContain(`[referenced: ${file} (lines 2-3) — the middle]`)
  expect(sent).toContain(`<context source=\\"${file}\\" lines=\\"1\\">\\none\\n</context>`)

  await agent.agent.request('session/close', { sessionId })
  const before = agent.updates(sessionId).length
  await agent.agent.request('session/load', { sessionId, cwd: agent.workspace, mcpServers: [] })
  const replayed = agent
    .updates(sessionId)
    .slice(before)
    .flatMap((u) => (u.sessionUpdate === 'user_message_chunk' ? [u.content] : []))
  expect(replayed).toEqual([
    { type: 'text', text: 'look at' },
    { type: 'resource_link', uri: `${pathToFileURL(file).href}#L2:3`, name: 'mention.ts', title: 'the middle' },
    { type: 'resource', resource: { uri: `${pathToFileURL(file).href}#L1:1`, text: 'one' } },
  ])
  expect(JSON.stringify(replayed)).not.toContain('[referenced:')
})

test('a call cut by session/cancel ends failed with the reason, and its command is stopped', async () => {
  const sessionId = await newSession()
  llm.enqueue(calls('slow', 'bash', { command: 'sleep 30' }), { text: 'never' })
  const prompt = agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'wait' }] })
  await agent.waitForUpdate(
    sessionId,
    (u) =>
      u.sessionUpdate === 'tool_call_update' &&
      u.toolCallId === 'slow' &&
      (u.content ?? []).some((c) => c.type === 'terminal'),
  )
  await agent.agent.notify('session/cancel', { sessionId })
  expect((await prompt).stopReason).toBe('cancelled')
  const last = toolUpdates(sessionId, 'slow').at(-1)!
  expect(last.status).toBe('failed')
  expect(textOf(last)).toMatch(/interrupt|cancel|abort/i)
  expect(toolUpdates(sessionId, 'slow').some((u) => u.status === 'completed')).toBe(false)
})

test("the editor's own error words reach the model and the user, not 'Internal error'", async () => {
  const sessionId = await newSession()
  refusal = 'Permission denied for terminal/create'
  try {
    llm.enqueue(calls('denied', 'bash', { command: 'echo hi' }), { text: 'ok' })
    await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run' }] })
  } finally {
    refusal = undefined
  }
  const last = toolUpdates(sessionId, 'denied').at(-1)!
  expect(last.status).toBe('failed')
  expect(textOf(last)).toContain('Permission denied for terminal/create')
  const toModel = JSON.stringify(llm.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool'))
  expect(toModel).toContain('Permission denied for terminal/create')
  expect(toModel).not.toContain('Internal error')
})

test('a result sends its output once: no rawOutput repeating the content', async () => {
  writeFileSync(join(agent.workspace, 'once.txt'), 'just once\n')
  const sessionId = await newSession()
  llm.enqueue(calls('r', 'read', { path: 'once.txt' }), { text: 'ok' })
  await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read' }] })
  const last = toolUpdates(sessionId, 'r').at(-1)!
  expect(last).toMatchObject({ status: 'completed' })
  expect(textOf(last)).toContain('just once')
  expect(last.rawOutput).toBeUndefined()
})
