// Whole-file diffs when the editor owns the file (issue #22): the official ACP client plays an editor whose
// buffers differ from the disk (unsaved edits); the diff an edit shows is the whole buffer before and after,
// from the log (the checkpoints read through the editor), live and again after `session/load`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { deriveMessages, deriveTurnRequest, type SessionEvent } from '@dsh/session'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

const DIFF_MAX_BYTES = 2000
const PATCH = `
- id: acp
  config: { diffMaxBytes: ${DIFF_MAX_BYTES} }
`
const KEY = 'test-key-0123456789'
const EDITOR = { fs: { readTextFile: true, writeTextFile: true } }

let llm: MockServer
let editor: AgentProcess

beforeAll(async () => {
  llm = await startMockServer()
  editor = await startAgent({
    patch: PATCH,
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY },
    capabilities: EDITOR,
  })
})
afterAll(async () => {
  await editor?.dispose()
  await llm?.close()
})

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: args }],
})
const newSession = async (agent: AgentProcess) =>
  (await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })).sessionId
const prompt = (agent: AgentProcess, sessionId: string, text: string) =>
  agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
type CallUpdate = Extract<SessionUpdate, { sessionUpdate: 'tool_call' | 'tool_call_update' }>
const callUpdates = (agent: AgentProcess, sessionId: string, callId: string) =>
  agent
    .updates(sessionId)
    .filter(
      (u): u is CallUpdate =>
        (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && u.toolCallId === callId,
    )
const diffsOf = (update: CallUpdate | undefined) => (update?.content ?? []).filter((block) => block.type === 'diff')
const textsOf = (update: CallUpdate | undefined) =>
  (update?.content ?? []).flatMap((block) =>
    block.type === 'content' && block.content.type === 'text' ? [block.content.text] : [],
  )

/** The stored log of a session (`$DSH_HOME/sessions/<cwd-key>/<id>/session.jsonl`: a header line, then events). */
function storedEvents(home: string, sessionId: string): SessionEvent[] {
  const sessions = join(home, 'sessions')
  const folder = readdirSync(sessions).find((key) => readdirSync(join(sessions, key)).includes(sessionId))!
  const lines = readFileSync(join(sessions, folder, sessionId, 'session.jsonl'), 'utf8')
    .trim()
    .split('\n')
  return lines.slice(1).map((line) => JSON.parse(line) as SessionEvent)
}

const UNREAD = 'UNSAVED-AND-NEVER-READ'
const filler = Array.from({ length: 30 }, (_, at) => `filler line ${at + 1}\n`).join('')
const buffer = `roses are red\nviolets are blue\n${filler}${UNREAD}\n`
const edited = buffer.replace('violets are blue', 'violets are green')

test("an edit of an unsaved buffer shows the whole buffer before and after, live and after session/load; the buffer reaches the model only through the tool's result", async () => {
  const file = join(editor.workspace, 'poem.txt')
  writeFileSync(file, 'an older poem, saved on disk\n')
  editor.buffers.set(file, buffer)
  const sessionId = await newSession(editor)
  llm.enqueue(
    { reasoning: 'Read the first lines.', ...call('r1', 'read', { path: 'poem.txt', limit: 2 }) },
    call('e1', 'edit', { path: 'poem.txt', old_string: 'violets are blue', new_string: 'violets are green' }),
    { text: 'Edited.' },
  )
  await prompt(editor, sessionId, 'make the violets green')
  expect(editor.fsWrites.at(-1)).toEqual({ path: file, content: edited })
  expect(readFileSync(file, 'utf8')).toBe('an older poem, saved on disk\n')

  const live = callUpdates(editor, sessionId, 'e1')
  // Asked for before it ran: the disk is not the old side (it holds an older text), so the fragment is shown.
  expect(diffsOf(live[0])).toEqual([
    { type: 'diff', path: file, oldText: 'violets are blue', newText: 'violets are green' },
  ])
  const done = live.at(-1)!
  expect(done).toMatchObject({ status: 'completed' })
  expect(diffsOf(done)).toEqual([{ type: 'diff', path: file, oldText: buffer, newText: edited }])

  // The whole texts are the checkpoints' (display facts): the model's requests hold none of the unread part,
  // and what the model is sent derives the same with or without them.
  expect(JSON.stringify(llm.requests.map((request) => request.body))).not.toContain(UNREAD)
  const events = storedEvents(editor.home, sessionId)
  expect(events.filter((event) => event.type.startsWith('checkpoint/')).map((event) => event.type)).toEqual([
    'checkpoint/before',
    'checkpoint/after',
  ])
  const without = events.filter((event) => !event.type.startsWith('checkpoint/'))
  expect(deriveMessages(events)).toEqual(deriveMessages(without))
  expect(deriveTurnRequest(events)).toEqual(deriveTurnRequest(without))

  // Another editor process loads the session: the same diff, from the log and the checkpoint store alone
  // (its buffers are empty and the disk still holds the older text).
  await editor.agent.request('session/close', { sessionId })
  const second = await startAgent({
    patch: PATCH,
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY },
    capabilities: EDITOR,
    home: editor.home,
    workspace: editor.workspace,
  })
  try {
    await second.agent.request('session/load', { sessionId, cwd: editor.workspace, mcpServers: [] })
    expect(diffsOf(callUpdates(second, sessionId, 'e1').at(-1))).toEqual([
      { type: 'diff', path: file, oldText: buffer, newText: edited },
    ])
    expect(second.fsReads).toEqual([])
    // Replayed in the order of the log: each answer's thought and text, then what its request used.
    expect(second.updates(sessionId).map((update) => update.sessionUpdate)).toEqual([
      'user_message_chunk',
      'agent_thought_chunk',
      'usage_update',
      'tool_call',
      'tool_call_update',
      'tool_call_update',
      'usage_update',
      'tool_call',
      'tool_call_update',
      'tool_call_update',
      'agent_message_chunk',
      'usage_update',
    ])
  } finally {
    await second.dispose()
  }
})

test('a new file written through the editor shows no old side; a refused edit shows no diff when it ends', async () => {
  const file = join(editor.workspace, 'fresh.md')
  writeFileSync(join(editor.workspace, 'unread.md'), 'keep\n')
  const sessionId = await newSession(editor)
  llm.enqueue(
    call('w1', 'write', { path: 'fresh.md', content: '# Fresh\n' }),
    call('e2', 'edit', { path: 'unread.md', old_string: 'keep', new_string: 'lost' }),
    { text: 'Done.' },
  )
  await prompt(editor, sessionId, 'write and edit')
  expect(diffsOf(callUpdates(editor, sessionId, 'w1').at(-1))).toEqual([
    { type: 'diff', path: file, oldText: null, newText: '# Fresh\n' },
  ])
  const refused = callUpdates(editor, sessionId, 'e2').at(-1)!
  expect(refused.status).toBe('failed')
  expect(diffsOf(refused)).toEqual([])
  expect(readFileSync(join(editor.workspace, 'unread.md'), 'utf8')).toBe('keep\n')
})

test('an insert, which proposes no diff, shows the whole buffer before and after once it is applied', async () => {
  const file = join(editor.workspace, 'list.md')
  writeFileSync(file, '- saved\n')
  editor.buffers.set(file, '- saved\n- unsaved\n')
  const sessionId = await newSession(editor)
  llm.enqueue(
    call('v4', 'str_replace_editor', { command: 'view', path: 'list.md' }),
    call('i4', 'str_replace_editor', { command: 'insert', path: 'list.md', insert_line: 2, new_str: '- inserted' }),
    {
      text: 'Done.',
    },
  )
  await prompt(editor, sessionId, 'add an item')
  const written = editor.fsWrites.at(-1)!
  expect(written.path).toBe(file)
  expect(written.content).toContain('- unsaved\n- inserted')
  const updates = callUpdates(editor, sessionId, 'i4')
  expect(diffsOf(updates[0])).toEqual([])
  expect(diffsOf(updates.at(-1))).toEqual([
    { type: 'diff', path: file, oldText: '- saved\n- unsaved\n', newText: written.content },
  ])
})

test('a buffer larger than diffMaxBytes shows the replaced fragment, and the card says why', async () => {
  const file = join(editor.workspace, 'big.txt')
  const big = `start\n${'x'.repeat(DIFF_MAX_BYTES)}\nend\n`
  writeFileSync(file, big)
  editor.buffers.set(file, big)
  const sessionId = await newSession(editor)
  llm.enqueue(
    call('r3', 'read', { path: 'big.txt', limit: 1 }),
    call('e3', 'edit', { path: 'big.txt', old_string: 'start', new_string: 'begin' }),
    { text: 'Done.' },
  )
  await prompt(editor, sessionId, 'rename the start')
  expect(editor.fsWrites.at(-1)).toEqual({ path: file, content: big.replace('start', 'begin') })
  const done = callUpdates(editor, sessionId, 'e3').at(-1)!
  expect(diffsOf(done)).toEqual([{ type: 'diff', path: file, oldText: 'start', newText: 'begin' }])
  expect(textsOf(done)[0]).toBe(
    `Not the whole file: before the call it is ${Buffer.byteLength(big)} bytes, more than diffMaxBytes (${DIFF_MAX_BYTES}); the change is shown from the call's arguments.`,
  )
})
