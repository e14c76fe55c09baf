// Protocol tests against the real runtime (`dsh --profile sdk`, in-process: test-support/runtime.ts): the session methods.
import { existsSync, realpathSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockReply, type MockServer } from '@dsh/llm-mock-server'
import { RPC_ERRORS } from '@dsh/sdk-protocol'
import { startInitialized, type Runtime } from './test-support/runtime.ts'

const runtimes: Runtime[] = []
const dirs: string[] = []
let llm: MockServer
beforeAll(async () => void (llm = await startMockServer()))
beforeEach(() => llm.reset())
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((rt) => rt.dispose()))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** One runtime of the plain sdk composition serves every test that needs nothing else (each its own session). */
let shared: Promise<Runtime> | undefined
afterAll(async () => {
  await (await shared)?.dispose()
  await llm.close()
})

async function start(
  replies: MockReply[],
  options?: { home?: string; workspace?: string; patch?: string; process?: boolean },
) {
  llm.enqueue(...replies)
  if (!options) return (shared ??= startInitialized({ llm }))
  const rt = await startInitialized({ llm, ...options })
  runtimes.push(rt)
  return rt
}

const chunkOf = (sessionId: string) => (m: { method?: string; params?: any }) =>
  m.method === 'session.event' && m.params.sessionId === sessionId && m.params.event.type === 'assistant/chunk'

const idle = (rt: Runtime, sessionId: string, count = 1) =>
  rt.waitFor(
    () =>
      rt.notifications('session.status').filter((m) => m.params.sessionId === sessionId && m.params.status === 'idle')
        .length >= count,
    `idle #${count} of ${sessionId}`,
  )

test('initialize answers with the server, the protocol version, capabilities and the mounted providers and models', async () => {
  const rt = await start([])
  const init = rt.messages.find((m) => m.id === 1)!
  expect(init.result).toEqual({
    protocolVersion: 1,
    serverInfo: { name: 'dsh', version: expect.stringMatching(/^\d+\.\d+\.\d+/), profile: 'sdk' },
    capabilities: { approvals: false, permissionPresets: true },
    providers: expect.arrayContaining([
      {
        provider: 'deepseek',
        models: expect.arrayContaining([
          expect.objectContaining({ id: 'deepseek-v4-flash', contextWindow: 1_000_000 }),
        ]),
      },
    ]),
    cwd: rt.workspace,
    limits: { maxLineBytes: 16 * 1024 * 1024 },
  })
})

test('a prompt is acknowledged with a receipt, every committed event is notified in log order, and the status goes running then idle', async () => {
  const rt = await start([{ text: ['Hello ', 'from ', 'the model'] }])
  const opened = await rt.request('session/new', {})
  const sessionId = opened.result.sessionId
  expect(opened.result).toEqual({ sessionId, length: 0 })
  const reply = await rt.request('session/prompt', { sessionId, content: 'say hello' })
  expect(reply.result).toEqual({ sessionId, messageId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
  await idle(rt, sessionId)
  const events = rt.events(sessionId)
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
  expect(
    events
      .filter((event) => event.type === 'assistant/chunk')
      .map((event) => event.data.text)
      .join(''),
  ).toBe('Hello from the model')
  expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  const statuses = rt
    .notifications('session.status')
    .map((m) => m.params)
    .filter((params) => params.sessionId === sessionId)
  expect(statuses).toEqual([
    { sessionId, status: 'running' },
    { sessionId, status: 'idle' },
  ])
  const page = await rt.request('session/events', { sessionId })
  expect(page.result).toEqual({ events, nextSeq: null, length: events.length })
})

test('a prompt for an unknown session id starts a new session and names it', async () => {
  const rt = await start([{ text: 'fresh' }])
  const reply = await rt.request('session/prompt', { sessionId: 'a-session-nobody-knows', content: 'hi' })
  const sessionId = reply.result.sessionId
  expect(sessionId).not.toBe('a-session-nobody-knows')
  await idle(rt, sessionId)
  expect(rt.events(sessionId, 'turn/end')[0].data.reason).toBe('completed')
})

test('session/events pages a stored log', async () => {
  const rt = await start([{ text: ['one ', 'two ', 'three'] }])
  const { sessionId } = (await rt.request('session/prompt', { content: 'count' })).result
  await idle(rt, sessionId)
  const total = rt.events(sessionId).length
  const first = await rt.request('session/events', { sessionId, limit: 4 })
  expect(first.result).toMatchObject({ nextSeq: 4, length: total })
  expect(first.result.events.map((event: any) => event.seq)).toEqual([0, 1, 2, 3])
  const last = await rt.request('session/events', { sessionId, fromSeq: total - 2, limit: 4 })
  expect(last.result).toMatchObject({ nextSeq: null })
  expect(last.result.events.map((event: any) => event.type)).toEqual(['step/end', 'turn/end'])
  const tooMany = await rt.request('session/events', { sessionId, limit: 1_000_000 })
  expect(tooMany.error).toMatchObject({ code: RPC_ERRORS.INVALID_PARAMS, data: { field: 'limit' } })
})

test('session/new takes a cwd, a route and a system prompt; session/setModel switches the model as a logged fact', async () => {
  const other = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-cwd-')))
  dirs.push(other)
  const rt = await start([{ text: 'first' }, { text: 'second' }])
  const { sessionId } = (
    await rt.request('session/new', { cwd: other, route: 'deepseek/deepseek-v4-pro', systemPrompt: 'You are terse.' })
  ).result
  await rt.request('session/prompt', { sessionId, content: 'go' })
  await idle(rt, sessionId)
  expect(rt.events(sessionId, 'request/header')[0].data.system).toBe('You are terse.')
  expect(llm.requests[0]!.body.messages[0]).toEqual({ role: 'system', content: 'You are terse.' })
  expect(llm.requests[0]!.body.model).toBe('deepseek-v4-pro')
  const listed = (await rt.request('session/list', { cwd: other })).result.sessions
  expect(listed.map((s: any) => s.id)).toEqual([sessionId])

  const switched = await rt.request('session/setModel', { sessionId, route: 'deepseek-v4-flash' })
  expect(switched.result).toEqual({ route: { provider: 'deepseek', model: 'deepseek-v4-flash' } })
  await rt.request('session/prompt', { sessionId, content: 'again' })
  await idle(rt, sessionId, 2)
  expect(rt.events(sessionId, 'model/route').map((event) => event.data.route.model)).toEqual([
    'deepseek-v4-pro',
    'deepseek-v4-flash',
  ])
  expect(llm.requests[1]!.body.model).toBe('deepseek-v4-flash')
})

test('session/setPermission switches the preset as logged facts; an unknown preset is refused by name', async () => {
  const rt = await start([])
  const { sessionId } = (await rt.request('session/new', { permission: 'read-only' })).result
  expect(rt.events(sessionId, 'permission/preset').map((event) => event.data.preset)).toEqual(['read-only'])
  expect((await rt.request('session/setPermission', { sessionId, preset: 'danger-full-access' })).result).toEqual({
    preset: 'danger-full-access',
  })
  expect(rt.events(sessionId, 'permission/preset').map((event) => event.data.preset)).toEqual([
    'read-only',
    'danger-full-access',
  ])
  expect(rt.events(sessionId, 'sandbox/mode').at(-1).data.mode).toBe('danger-full-access')
  const unknown = await rt.request('session/setPermission', { sessionId, preset: 'god-mode' })
  expect(unknown.error).toMatchObject({
    code: RPC_ERRORS.REQUEST_FAILED,
    data: { code: 'UNKNOWN_PRESET', field: 'preset' },
  })
  const refused = await rt.request('session/new', { permission: 'god-mode' })
  expect(refused.error).toMatchObject({
    code: RPC_ERRORS.REQUEST_FAILED,
    data: { code: 'UNKNOWN_PRESET', field: 'permission' },
  })
})

test('session/setPermission without a presets row is refused with a typed code', async () => {
  const rt = await start([], { patch: '- id: permission-presets\n  disabled: true\n' })
  expect(rt.messages.find((m) => m.id === 1)!.result.capabilities.permissionPresets).toBe(false)
  const { sessionId } = (await rt.request('session/new', {})).result
  const reply = await rt.request('session/setPermission', { sessionId, preset: 'read-only' })
  expect(reply.error).toMatchObject({
    code: RPC_ERRORS.REQUEST_FAILED,
    data: { code: 'PERMISSION_PRESETS_UNAVAILABLE' },
  })
})

test('cancel mid-turn stops the turn: the text so far is kept and the turn ends aborted', async () => {
  const rt = await start([{ text: ['partial ', 'answer'], stallAfterChunks: 3 }])
  const { sessionId } = (await rt.request('session/prompt', { content: 'talk forever' })).result
  await rt.waitFor(chunkOf(sessionId), 'the first chunk')
  const cancelled = await rt.request('session/cancel', { sessionId })
  expect(cancelled.result).toEqual({ wasRunning: true })
  await idle(rt, sessionId)
  expect(rt.events(sessionId, 'assistant/message')[0].data).toMatchObject({ interrupted: true, finish: 'aborted' })
  expect(rt.events(sessionId, 'turn/end')[0].data.reason).toBe('aborted')
  expect((await rt.request('session/cancel', { sessionId })).result).toEqual({ wasRunning: false })
})

test('a cancel sent as a notification is obeyed and answered with nothing', async () => {
  const rt = await start([{ text: ['partial ', 'answer'], stallAfterChunks: 3 }])
  const { sessionId } = (await rt.request('session/prompt', { content: 'talk' })).result
  await rt.waitFor(chunkOf(sessionId), 'the first chunk')
  rt.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } })
  await idle(rt, sessionId)
  expect(rt.events(sessionId, 'turn/end')[0].data.reason).toBe('aborted')
  expect(rt.messages.filter((m) => m.id === undefined && !m.method)).toEqual([])
})

test('a session is resumed by a second runtime and forked at a turn boundary; a fork inside a turn is refused', async () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-home-')))
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-ws-')))
  dirs.push(home, workspace)
  const first = await start([{ text: 'remembered' }], { home, workspace })
  const { sessionId } = (await first.request('session/prompt', { content: 'remember this' })).result
  await idle(first, sessionId)
  const turnEnd = first.events(sessionId, 'turn/end')[0].seq
  expect((await first.request('shutdown')).result).toEqual({})
  await first.exited

  const second = await start([{ text: 'continued' }, { text: 'forked' }], { home, workspace })
  // Two resumes at once (issue #28.3): both answer with the one open session, neither meets the other's lease.
  const [resumed, again] = await Promise.all([
    second.request('session/resume', { sessionId }),
    second.request('session/resume', { sessionId }),
  ])
  expect(resumed.result).toEqual({ sessionId, length: turnEnd + 1 })
  expect(again.result).toEqual({ sessionId, length: turnEnd + 1 })
  await second.request('session/prompt', { sessionId, content: 'and now?' })
  await idle(second, sessionId)
  const continued = second.events(sessionId, 'user/message').map((event) => event.data.content[0].text)
  expect(continued).toEqual(['and now?'])
  const history = (await second.request('session/events', { sessionId })).result.events.filter(
    (event: any) => event.type === 'user/message',
  )
  expect(history.map((event: any) => event.data.content[0].text)).toEqual(['remember this', 'and now?'])

  const fork = await second.request('session/fork', { sessionId, atSeq: turnEnd })
  expect(fork.result).toEqual({ sessionId: expect.any(String), length: turnEnd + 1 })
  expect(fork.result.sessionId).not.toBe(sessionId)
  const listed = (await second.request('session/list')).result.sessions.find((s: any) => s.id === fork.result.sessionId)
  expect(listed.parent).toEqual({ id: sessionId, atSeq: turnEnd })
  const inside = await second.request('session/fork', { sessionId, atSeq: 2 })
  expect(inside.error).toMatchObject({ code: RPC_ERRORS.REQUEST_FAILED, data: { code: 'FORK_INSIDE_TURN' } })
})

test('a plugin writing to stdout does not corrupt the protocol: its text goes to stderr', async () => {
  const noisy = new URL('./fixtures/noisy-plugin.mjs', import.meta.url).pathname
  // The process's real stdout is the subject: spawned.
  const rt = await start([{ text: 'ok' }], {
    patch: `- insert: [{ id: noisy, name: ${JSON.stringify(noisy)} }]\n`,
    process: true,
  })
  const { sessionId } = (await rt.request('session/prompt', { content: 'hi' })).result
  await idle(rt, sessionId)
  await rt.waitForStderr('noisy plugin: agent is idle')
  expect(rt.junk).toEqual([])
})

test('session/new { agentPreset } narrows the tools the requests carry (logged as the client’s choice); an unknown one is refused by name', async () => {
  const rt = await start([{ text: 'looked' }])
  const { sessionId } = (await rt.request('session/new', { agentPreset: 'explore' })).result
  await rt.request('session/prompt', { sessionId, content: 'look' })
  await idle(rt, sessionId)
  const tools = llm.requests[0]!.body.tools.map((tool: any) => tool.function.name)
  expect(tools).toContain('read')
  expect(
    tools.filter((name: string) => ['bash', 'write', 'edit', 'str_replace_editor', 'task'].includes(name)),
  ).toEqual([])
  expect(rt.events(sessionId, 'agent/preset').map((event) => [event.data.name, event.data.actor])).toEqual([
    ['explore', 'client:sdk'],
  ])
  const refused = await rt.request('session/new', { agentPreset: 'root' })
  expect(refused.error).toMatchObject({
    code: RPC_ERRORS.REQUEST_FAILED,
    data: { code: 'UNKNOWN_AGENT_PRESET', field: 'agentPreset' },
  })
})

test('session/new { planMode } refuses a write until session/setPlanMode { active: false }', async () => {
  const write = (id: string) => ({
    toolCalls: [{ id, name: 'write', arguments: { path: 'planned.txt', content: 'x\n' } }],
  })
  const rt = await start([write('w1'), { text: 'refused' }, write('w2'), { text: 'written' }])
  const { sessionId } = (await rt.request('session/new', { planMode: true })).result
  await rt.request('session/prompt', { sessionId, content: 'write it' })
  await idle(rt, sessionId)
  expect(rt.events(sessionId, 'tool/result')[0].data.error).toMatchObject({
    code: 'DENIED',
    message: expect.stringContaining('plan mode'),
  })
  expect(existsSync(join(rt.workspace, 'planned.txt'))).toBe(false)
  expect((await rt.request('session/setPlanMode', { sessionId, active: false })).result).toEqual({ active: false })
  await rt.request('session/prompt', { sessionId, content: 'now' })
  await idle(rt, sessionId, 2)
  expect(existsSync(join(rt.workspace, 'planned.txt'))).toBe(true)
})
