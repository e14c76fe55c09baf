// Protocol tests against the real runtime (`dsh --profile sdk`, in-process: test-support/runtime.ts): approvals as
// server-to-client requests, fail-closed. The fixture tool `write_file` asks before writing under protected/.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { fixtureToolsPatch, startInitialized, type Runtime } from './test-support/runtime.ts'

let llm: MockServer
/** A client that declared the approvals capability (shared by the tests that answer). */
let answering: Runtime
const others: Runtime[] = []
beforeAll(async () => {
  llm = await startMockServer()
  answering = await startInitialized({ llm, patch: fixtureToolsPatch(), approvals: true })
})
beforeEach(() => llm.reset())
afterAll(async () => {
  await Promise.all([answering, ...others].map((rt) => rt?.dispose()))
  await llm.close()
})

/** The model will ask to write `path` (under protected/: the fixture tool wants approval), then say it is done. */
const scriptWrite = (path: string) =>
  llm.enqueue(
    { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path, text: 'approved text' } }] },
    { text: 'done' },
  )

async function prompt(rt: Runtime, content: string): Promise<string> {
  return (await rt.request('session/prompt', { content })).result.sessionId
}

const idle = (rt: Runtime, sessionId: string) =>
  rt.waitFor(
    (m) => m.method === 'session.status' && m.params.sessionId === sessionId && m.params.status === 'idle',
    'idle',
    20_000,
  )
const askedIn = (rt: Runtime, sessionId: string) =>
  rt.waitFor((m) => m.method === 'approval/request' && m.params.sessionId === sessionId, 'the approval request')
const decided = (rt: Runtime, sessionId: string) => rt.events(sessionId, 'approval/decided').map((event) => event.data)

test('an approval is asked of the client as a request; allow_once lets the call run', async () => {
  scriptWrite('protected/a.txt')
  const sessionId = await prompt(answering, 'write it')
  const asked = await askedIn(answering, sessionId)
  expect(asked.id).toEqual(expect.any(String))
  expect(asked.params).toEqual({
    requestId: expect.any(String),
    sessionId,
    callId: 'w1',
    tool: 'write_file',
    summary: 'write protected/a.txt',
    reason: 'it writes under protected/ (protected/a.txt)',
    arguments: { path: 'protected/a.txt', text: 'approved text' },
  })
  answering.send({ jsonrpc: '2.0', id: asked.id, result: { answer: 'allow_once' } })
  await idle(answering, sessionId)
  expect(readFileSync(join(answering.workspace, 'protected/a.txt'), 'utf8')).toBe('approved text')
  expect(decided(answering, sessionId)).toEqual([
    { requestId: asked.params.requestId, answer: 'allow_once', by: 'user', actor: 'client:sdk' },
  ])
})

test('allow_session keeps the offered rule under client:sdk: the same command is not asked again in the session', async () => {
  const unconfined = (id: string) => ({
    toolCalls: [
      {
        id,
        name: 'bash',
        arguments: { command: `touch ${id}.txt`, sandbox: false, justification: 'the test needs it' },
      },
    ],
  })
  llm.enqueue(unconfined('s1'), unconfined('s2'), { text: 'done' })
  const sessionId = await prompt(answering, 'touch two files')
  const asked = await askedIn(answering, sessionId)
  expect(asked.params).toMatchObject({ callId: 's1', rule: 'unconfined(touch *)' })
  answering.send({ jsonrpc: '2.0', id: asked.id, result: { answer: 'allow_session' } })
  await idle(answering, sessionId)
  expect(existsSync(join(answering.workspace, 's1.txt'))).toBe(true)
  expect(existsSync(join(answering.workspace, 's2.txt'))).toBe(true)
  expect(answering.events(sessionId, 'approval/asked').map((event) => event.data.callId)).toEqual(['s1'])
  expect(answering.events(sessionId, 'grant/added').map((event) => event.data)).toEqual([
    expect.objectContaining({ rule: 'unconfined(touch *)', scope: 'session', actor: 'client:sdk' }),
  ])
})

test('attack: an answer claiming another actor is recorded under client:sdk, the only actor this surface has', async () => {
  const unconfined = {
    toolCalls: [
      {
        id: 'c1',
        name: 'bash',
        arguments: { command: 'touch claimed.txt', sandbox: false, justification: 'the test needs it' },
      },
    ],
  }
  llm.enqueue(unconfined, { text: 'done' })
  const sessionId = await prompt(answering, 'touch a file')
  const asked = await askedIn(answering, sessionId)
  answering.send({
    jsonrpc: '2.0',
    id: asked.id,
    result: { answer: 'allow_always', actor: 'user:web-tab', by: 'user' },
  })
  await idle(answering, sessionId)
  expect(decided(answering, sessionId)).toEqual([
    expect.objectContaining({ answer: 'allow_always', actor: 'client:sdk' }),
  ])
  expect(answering.events(sessionId, 'grant/added').map((event) => event.data.actor)).toEqual(['client:sdk'])
  const stored = readFileSync(join(answering.home, 'grants.yaml'), 'utf8')
  expect(stored).toContain('actor: client:sdk')
  expect(stored).not.toContain('user:web-tab')
})

test('reject refuses the call and the file is absent', async () => {
  scriptWrite('protected/b.txt')
  const sessionId = await prompt(answering, 'write it')
  const asked = await askedIn(answering, sessionId)
  answering.send({ jsonrpc: '2.0', id: asked.id, result: { answer: 'reject' } })
  await idle(answering, sessionId)
  expect(existsSync(join(answering.workspace, 'protected/b.txt'))).toBe(false)
  expect(answering.events(sessionId, 'tool/result')[0].data.error.code).toBe('APPROVAL_REJECTED')
})

test('a malformed answer is a rejection', async () => {
  scriptWrite('protected/d.txt')
  const sessionId = await prompt(answering, 'write it')
  const asked = await askedIn(answering, sessionId)
  answering.send({ jsonrpc: '2.0', id: asked.id, result: { answer: 'yes please' } })
  await idle(answering, sessionId)
  expect(existsSync(join(answering.workspace, 'protected/d.txt'))).toBe(false)
  expect(decided(answering, sessionId)[0]).toMatchObject({
    answer: 'reject',
    by: 'error',
    note: expect.stringContaining('"yes please"'),
  })
})

test('an approval left unanswered is rejected after approvalTimeoutMs and the file is absent', async () => {
  scriptWrite('protected/c.txt')
  const rt = await startInitialized({
    llm,
    patch: fixtureToolsPatch('- id: sdk-server\n  config: { approvalTimeoutMs: 300 }\n'),
    approvals: true,
  })
  others.push(rt)
  const sessionId = await prompt(rt, 'write it')
  await idle(rt, sessionId)
  expect(rt.messages.filter((m) => m.method === 'approval/request')).toHaveLength(1)
  expect(existsSync(join(rt.workspace, 'protected/c.txt'))).toBe(false)
  expect(decided(rt, sessionId)).toEqual([
    expect.objectContaining({
      answer: 'reject',
      by: 'error',
      note: expect.stringContaining('did not answer approval/request within 300 ms'),
    }),
  ])
})

test('a client without the approvals capability is never asked, and the call is refused', async () => {
  scriptWrite('protected/e.txt')
  const rt = await startInitialized({ llm, patch: fixtureToolsPatch(), approvals: false })
  others.push(rt)
  const sessionId = await prompt(rt, 'write it')
  await idle(rt, sessionId)
  expect(rt.messages.filter((m) => m.method === 'approval/request')).toEqual([])
  expect(existsSync(join(rt.workspace, 'protected/e.txt'))).toBe(false)
  expect(decided(rt, sessionId)[0]).toMatchObject({ answer: 'reject', by: 'no-answerer' })
})
