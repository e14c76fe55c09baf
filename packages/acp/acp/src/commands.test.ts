import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

// A real `dsh acp` process and the ACP SDK's own client; the workspace holds a Claude Code command file.
const GREET = '---\ndescription: Greet someone by name\nargument-hint: <name>\n---\nSay hello to $1, politely.\n'

let llm: MockServer
let agent: AgentProcess

beforeAll(async () => {
  llm = await startMockServer()
  agent = await startAgent({
    patch: '[]',
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
    workspaceFiles: { '.claude/commands/greet.md': GREET },
  })
})
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
})

const newSession = async () =>
  (await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })).sessionId
const prompt = (sessionId: string, text: string) =>
  agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const messageText = (updates: SessionUpdate[]) =>
  updates
    .flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
    .join('')

describe('slash commands over ACP', () => {
  test('a new session is told the commands, a user command with its argument hint among them', async () => {
    const sessionId = await newSession()
    const update = await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === 'available_commands_update')
    if (update.sessionUpdate !== 'available_commands_update') throw new Error('unreachable')
    const names = update.availableCommands.map((command) => command.name)
    expect(names).toEqual(
      expect.arrayContaining(['help', 'compact', 'model', 'clear', 'fork', 'cost', 'skills', 'greet']),
    )
    expect(update.availableCommands.find((command) => command.name === 'greet')).toEqual({
      name: 'greet',
      description: 'Greet someone by name',
      input: { hint: '<name>' },
    })
  })

  test('a .claude/commands command with arguments runs as the turn: the model gets the expanded prompt', async () => {
    const sessionId = await newSession()
    llm.enqueue({ text: 'Hello, Ada.' })
    expect((await prompt(sessionId, '/greet Ada')).stopReason).toBe('end_turn')
    expect(llm.requests.at(-1)!.body.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'Say hello to Ada, politely.',
    })
    expect(messageText(agent.updates(sessionId))).toContain('Hello, Ada.')
  })

  test('a built-in answers as the agent without a model request; an unknown /word goes as text with a notice', async () => {
    const sessionId = await newSession()
    const before = llm.requests.length
    expect((await prompt(sessionId, '/help')).stopReason).toBe('end_turn')
    expect(messageText(agent.updates(sessionId))).toContain('/greet <name> — Greet someone by name')
    expect(llm.requests.length).toBe(before)
    llm.enqueue({ text: 'no idea' })
    await prompt(sessionId, '/nosuch thing')
    expect(messageText(agent.updates(sessionId))).toContain(
      '/nosuch is not a command here: it was sent to the model as text',
    )
    expect(llm.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'user', content: '/nosuch thing' })
  })
})

describe('naming a session over ACP', () => {
  test('/rename logs the user title and the editor is told it as a session_info_update', async () => {
    const sessionId = await newSession()
    const before = llm.requests.length
    expect((await prompt(sessionId, '/rename  Flaky\ncache  hunt')).stopReason).toBe('end_turn')
    expect(messageText(agent.updates(sessionId))).toContain('Renamed this session to "Flaky cache hunt".')
    const info = await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === 'session_info_update')
    expect(info).toMatchObject({ sessionUpdate: 'session_info_update', title: 'Flaky cache hunt' })
    expect(llm.requests.length).toBe(before)
    const listed = await agent.agent.request('session/list', { cwd: agent.workspace })
    expect(listed.sessions.find((session) => session.sessionId === sessionId)?.title).toBe('Flaky cache hunt')
    await prompt(sessionId, '/rename')
    expect(messageText(agent.updates(sessionId))).toContain(
      '/rename failed: give the new title: /rename <title> (INVALID_TITLE)',
    )
  })
})
