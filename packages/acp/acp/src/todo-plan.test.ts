import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

// The agent's task list reaches the editor as ACP `plan` updates, through the official client library.
let llm: MockServer
let agent: AgentProcess
let asked: string[] = []
beforeAll(async () => {
  llm = await startMockServer()
  agent = await startAgent({
    patch: '[]\n',
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
    permission: (request) => (
      asked.push(String((request.toolCall.content?.[0] as any)?.content?.text ?? request.toolCall.title)),
      { outcome: { outcome: 'selected', optionId: 'allow_once' } }
    ),
  })
})
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
})

const todo = (id: string, todos: unknown[]) => ({ toolCalls: [{ id, name: 'todo_write', arguments: { todos } }] })
const plans = (updates: SessionUpdate[]) =>
  updates.filter(
    (update): update is Extract<SessionUpdate, { sessionUpdate: 'plan' }> => update.sessionUpdate === 'plan',
  )

test('each todo_write reaches the editor as a plan update carrying the whole list', async () => {
  const { sessionId } = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
  llm.enqueue(
    todo('t1', [
      { content: 'read the failing test', status: 'in_progress', priority: 'high' },
      { content: 'fix the parser', status: 'pending', priority: 'medium' },
    ]),
    todo('t2', [
      { content: 'read the failing test', status: 'completed', priority: 'high' },
      { content: 'fix the parser', status: 'in_progress', priority: 'medium' },
    ]),
    { text: 'working on it' },
  )
  await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'fix it' }] })
  expect(plans(agent.updates(sessionId)).map((update) => update.entries)).toEqual([
    [
      { content: 'read the failing test', status: 'in_progress', priority: 'high' },
      { content: 'fix the parser', status: 'pending', priority: 'medium' },
    ],
    [
      { content: 'read the failing test', status: 'completed', priority: 'high' },
      { content: 'fix the parser', status: 'in_progress', priority: 'medium' },
    ],
  ])
})

test('plan mode is a session mode next to the presets: in it a write is refused, and the approved exit_plan_mode returns to the preset', async () => {
  const { sessionId, modes } = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
  expect(modes?.availableModes.map((mode) => mode.id)).toEqual([
    'read-only',
    'workspace-write',
    'danger-full-access',
    'plan',
  ])
  await agent.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
  llm.enqueue(
    { toolCalls: [{ id: 'w', name: 'write', arguments: { path: 'planned.txt', content: 'x' } }] },
    { toolCalls: [{ id: 'exit', name: 'exit_plan_mode', arguments: { plan: 'write planned.txt' } }] },
    { toolCalls: [{ id: 'w2', name: 'write', arguments: { path: 'planned.txt', content: 'x' } }] },
    { text: 'done' },
  )
  asked = []
  await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'plan and do' }] })
  expect(asked).toEqual(['write planned.txt'])
  const modesSeen = agent.updates(sessionId).filter((update) => update.sessionUpdate === 'current_mode_update')
  expect(modesSeen.map((update) => (update as { currentModeId: string }).currentModeId)).toEqual([
    'plan',
    'workspace-write',
  ])
  const refused = agent
    .updates(sessionId)
    .filter((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'w' && update.status)
  expect(refused.at(-1)).toMatchObject({ status: 'failed' })
  expect(existsSync(join(agent.workspace, 'planned.txt'))).toBe(true)
})
