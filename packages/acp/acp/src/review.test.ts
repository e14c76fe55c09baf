// Truthful tool calls and the turn's changed files, through the official ACP client against a real `dsh acp`.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

let llm: MockServer
let agent: AgentProcess

beforeAll(async () => {
  llm = await startMockServer()
  agent = await startAgent({
    patch: '[]\n',
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
  })
})
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
})

const calls = (...list: [string, string, Record<string, unknown>][]) => ({
  toolCalls: list.map(([id, name, args]) => ({ id, name, arguments: args })),
})
const lastUpdate = (sessionId: string, callId: string) =>
  agent
    .updates(sessionId)
    .filter(
      (u): u is Extract<SessionUpdate, { sessionUpdate: 'tool_call_update' }> =>
        u.sessionUpdate === 'tool_call_update' && u.toolCallId === callId,
    )
    .at(-1)!

test('a command that exits 1 ends failed; a refused edit ends failed without its diff; the turn ends with the files it changed', async () => {
  const { sessionId } = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
  writeFileSync(join(agent.workspace, 'a.txt'), 'one\n')
  writeFileSync(join(agent.workspace, 'unread.txt'), 'keep\n')
  llm.enqueue(
    calls(
      ['fails', 'bash', { command: 'echo nope; exit 1' }],
      ['read', 'read', { path: 'a.txt' }],
      ['edit', 'edit', { path: 'a.txt', old_string: 'one', new_string: 'uno' }],
      ['refused', 'edit', { path: 'unread.txt', old_string: 'keep', new_string: 'lost' }],
    ),
    { text: 'Done.' },
  )
  await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })
  expect(lastUpdate(sessionId, 'fails').status).toBe('failed')
  const refused = lastUpdate(sessionId, 'refused')
  expect(refused.status).toBe('failed')
  expect(refused.content?.some((block) => block.type === 'diff')).toBe(false)
  expect(lastUpdate(sessionId, 'edit')).toMatchObject({
    status: 'completed',
    content: [{ type: 'diff' }, { type: 'content' }],
  })
  expect(readFileSync(join(agent.workspace, 'unread.txt'), 'utf8')).toBe('keep\n')
  const last = agent.updates(sessionId).at(-1)!
  expect(last).toEqual({
    sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: '\n\nThis turn changed 1 file:\n- M a.txt (+1 −1)\n' },
  })
})
