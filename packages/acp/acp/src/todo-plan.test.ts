import { afterAll, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

// The agent's task list reaches the editor as ACP `plan` updates, through the official client library.
let llm: MockServer
let agent: AgentProcess
beforeAll(async () => {
  llm = await startMockServer()
  agent = await startAgent({ patch: '[]\n', env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' }, permission: () => ({ outcome: { outcome: 'cancelled' } }) })
})
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
})

const todo = (id: string, todos: unknown[]) => ({ toolCalls: [{ id, name: 'todo_write', arguments: { todos } }] })
const plans = (updates: SessionUpdate[]) => updates.filter((update): update is Extract<SessionUpdate, { sessionUpdate: 'plan' }> => update.sessionUpdate === 'plan')

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
