import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, onTestFinished, test } from 'vitest'
import { tempDir } from '@dsh/test-harness/world'
import WebSocket from 'ws'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { WS_PROTOCOL, type Frame, type WireEvent } from '@dsh/web-protocol'
import { signInWithLink } from '@dsh/webserver'

// The web profile in process, answering with the scripted model and real fixture tools.
const PATCH = `
- insert:
    - id: scripted
      name: '@dsh/llm-scripted'
    - id: fixture-tools
      name: '@dsh/test-harness/fixture-tools'
- id: agents
  config: { route: { provider: scripted, model: scripted-1 } }
- id: webserver
  config: { announce: false, open: false }
`

let h: Harness
let cookie: string
afterEach(async () => h?.dispose())

async function boot(script: ScriptedResponse[] = [], rows = '') {
  h = await bootComposition({ profile: 'web', argv: ['--port', '0'], patch: PATCH + rows })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

async function api<T = any>(method: string, params: unknown = {}): Promise<T> {
  const origin = h.root.webserver.url
  const response = await fetch(`${origin}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(params),
  })
  const body = (await response.json()) as any
  if (!body.ok) throw Object.assign(new Error(body.error.message), { code: body.error.code })
  return body.result
}

/** A tab's stream: every frame it received, and a way to wait for one. */
async function tab() {
  const origin = h.root.webserver.url
  const socket = new WebSocket(`${origin.replace('http', 'ws')}/ws`, [WS_PROTOCOL], { origin, headers: { cookie } })
  const frames: Frame[] = []
  const waiters: (() => void)[] = []
  socket.on('message', (data) => {
    frames.push(...(JSON.parse(String(data)) as Frame[]))
    for (const wake of waiters.splice(0)) wake()
  })
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 30_000
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise<void>((wake) => {
        waiters.push(wake)
        setTimeout(wake, 100)
      })
    }
  }
  return {
    frames,
    events: (sessionId: string) =>
      frames.flatMap((frame) =>
        frame.ch === 'session' && frame.key === sessionId && frame.type === 'event' ? [frame.event as WireEvent] : [],
      ),
    subscribe: (ch: string, key: string, params?: unknown) =>
      socket.send(JSON.stringify({ op: 'sub', ch, key, params })),
    until,
    close: () => new Promise((resolve) => (socket.once('close', resolve), socket.close())),
  }
}

/** The `approval/asked` of one call, once the tab has it. */
async function approvalAsked(t: Awaited<ReturnType<typeof tab>>, sessionId: string, callId: string) {
  const find = () =>
    t.events(sessionId).find((event) => event.type === 'approval/asked' && event.data.callId === callId)
  await t.until(() => !!find(), `the approval of ${callId}`)
  return find()!
}

const eventsOf = (sessionId: string) => h.root.sessions.get(sessionId)!.events

test('a tab subscribed from a seq receives every later event exactly once, also after reconnecting', async () => {
  await boot([{ text: 'first answer' }, { text: 'second answer' }])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  await api('agent.send', { sessionId, text: 'one' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  const seen = eventsOf(sessionId).length

  const first = await tab()
  first.subscribe('session', sessionId, { since: 0 })
  await first.until(() => first.events(sessionId).length === seen, 'the replay')
  const last = first.events(sessionId).at(-1)!.seq
  await first.close()

  // While no tab listens, a turn runs; the next tab resumes from the seq after the last one it saw.
  await api('agent.send', { sessionId, text: 'two' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  const second = await tab()
  second.subscribe('session', sessionId, { since: last + 1 })
  const total = eventsOf(sessionId).length
  await second.until(() => second.events(sessionId).at(-1)?.seq === total - 1, 'the missed events')
  const seqs = [...first.events(sessionId), ...second.events(sessionId)].map((event) => event.seq)
  expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i))
  expect(
    second
      .events(sessionId)
      .some((event) => event.type === 'assistant/message' && event.data.content[0].text === 'second answer'),
  ).toBe(true)
  await second.close()
})

test('two tabs see one approval, the first answer decides it and the second is told it is settled', async () => {
  await boot([
    { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'protected/a.txt', text: 'approved' } }] },
    { text: 'wrote it' },
  ])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const [a, b] = [await tab(), await tab()]
  for (const t of [a, b]) t.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'write the protected file' })
  for (const t of [a, b])
    await t.until(() => t.events(sessionId).some((event) => event.type === 'approval/asked'), 'the approval')
  const asked = a.events(sessionId).find((event) => event.type === 'approval/asked')!
  expect(b.events(sessionId).find((event) => event.type === 'approval/asked')!.data.requestId).toBe(
    asked.data.requestId,
  )
  expect((await api('sessions.open', { sessionId })).pendingApprovals).toEqual([asked.data.requestId])

  await api('approvals.answer', { requestId: asked.data.requestId, answer: 'allow_once' })
  await expect(api('approvals.answer', { requestId: asked.data.requestId, answer: 'reject' })).rejects.toMatchObject({
    code: 'CONFLICT',
  })
  for (const t of [a, b])
    await t.until(() => t.events(sessionId).some((event) => event.type === 'approval/decided'), 'the decision')
  expect(b.events(sessionId).find((event) => event.type === 'approval/decided')!.data).toMatchObject({
    answer: 'allow_once',
    by: 'user',
  })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  expect(existsSync(join(h.workspace, 'protected/a.txt'))).toBe(true)
  await Promise.all([a.close(), b.close()])
})

test('a tab keeps a grant only when the request offers a rule, and the grant names the web tab as its actor (an actor the answer claims is not taken)', async () => {
  await boot([
    { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'protected/a.txt', text: 'x' } }] },
    {
      toolCalls: [
        { id: 'b1', name: 'bash', arguments: { command: 'true', sandbox: false, justification: 'show the grant' } },
      ],
    },
    { text: 'done' },
  ])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const a = await tab()
  a.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'go' })
  const askedFor = (callId: string) => approvalAsked(a, sessionId, callId)
  const first = await askedFor('w1')
  expect(first.data.rule).toBeUndefined()
  await expect(
    api('approvals.answer', { requestId: first.data.requestId, answer: 'allow_session' }),
  ).rejects.toMatchObject({ code: 'BAD_PARAMS', message: expect.stringContaining('offers no rule') })
  await api('approvals.answer', { requestId: first.data.requestId, answer: 'allow_once' })
  const second = await askedFor('b1')
  expect(second.data.rule).toBe('unconfined(true *)')
  await api('approvals.answer', {
    requestId: second.data.requestId,
    answer: 'allow_session',
    actor: 'client:acp',
    by: 'grant',
  })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  const log = h.root.sessions.get(sessionId)!
  expect(log.all('grant/added').map((event) => event.data)).toEqual([
    expect.objectContaining({ rule: 'unconfined(true *)', scope: 'session', actor: 'user:web-tab' }),
  ])
  expect(log.all('approval/decided').map((event) => [event.data.answer, event.data.actor])).toEqual([
    ['allow_once', 'user:web-tab'],
    ['allow_session', 'user:web-tab'],
  ])
  await a.close()
})

test('a tab may edit the suggested rule before keeping it: an edit that does not parse or does not cover the call is refused and the request keeps waiting; the kept rule covers the next call but not one with a command chained to it', async () => {
  const unconfined = (id: string, command: string) => ({
    toolCalls: [{ id, name: 'bash', arguments: { command, sandbox: false, justification: 'the edited rule' } }],
  })
  await boot([
    unconfined('b1', 'git status --short'),
    unconfined('b2', 'git log -1'),
    unconfined('b3', 'git status; touch pwned'),
    { text: 'done' },
  ])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const a = await tab()
  a.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'go' })
  const askedFor = (callId: string) => approvalAsked(a, sessionId, callId)
  // approval/asked is logged before the grants are checked, so a tab may see it before it can be answered.
  const waiting = async (requestId: string) => {
    for (let tries = 0; !(await api('sessions.open', { sessionId })).pendingApprovals.includes(requestId); tries++) {
      if (tries > 300) throw new Error(`${requestId} never waited for an answer`)
      await new Promise((wake) => setTimeout(wake, 100))
    }
  }
  const first = await askedFor('b1')
  expect(first.data.rule).toBe('unconfined(git status *)')
  await waiting(first.data.requestId)
  const answer = (rule: string) =>
    api('approvals.answer', { requestId: first.data.requestId, answer: 'allow_always', rule })
  await expect(answer('unconfined(git log *)')).rejects.toMatchObject({
    code: 'BAD_PARAMS',
    message: expect.stringContaining('does not cover this call'),
  })
  await expect(answer('bash(git *)')).rejects.toMatchObject({
    code: 'BAD_PARAMS',
    message: expect.stringContaining('needs a unconfined(…) rule'),
  })
  await expect(answer('git *')).rejects.toMatchObject({
    code: 'BAD_PARAMS',
    message: expect.stringContaining('is not a rule'),
  })
  await expect(
    api('approvals.answer', { requestId: first.data.requestId, answer: 'allow_once', rule: 'unconfined(git *)' }),
  ).rejects.toMatchObject({ code: 'BAD_PARAMS' })
  expect((await api('sessions.open', { sessionId })).pendingApprovals).toEqual([first.data.requestId])
  await answer(' unconfined(git *) ')
  // b2 runs on the kept grant without asking; b3 chains a command to git status, so it is asked about.
  const third = await askedFor('b3')
  await waiting(third.data.requestId)
  await api('approvals.answer', { requestId: third.data.requestId, answer: 'reject' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  const log = h.root.sessions.get(sessionId)!
  expect(log.all('approval/asked').map((event) => event.data.callId)).toEqual(['b1', 'b3'])
  expect(log.all('grant/added').map((event) => event.data)).toEqual([
    expect.objectContaining({ rule: 'unconfined(git *)', scope: 'workspace', actor: 'user:web-tab' }),
  ])
  expect(log.all('approval/decided')[0]!.data).toMatchObject({ answer: 'allow_always', rule: 'unconfined(git *)' })
  expect(existsSync(join(h.workspace, 'pwned'))).toBe(false)
  await a.close()
})

test('a new session needs an existing folder, and the route and preset it starts with are logged', async () => {
  await boot()
  await expect(api('sessions.create', { cwd: join(h.workspace, 'missing') })).rejects.toMatchObject({
    code: 'BAD_PARAMS',
  })
  await expect(
    api('sessions.create', { cwd: h.workspace, route: { provider: 'nobody', model: 'x' } }),
  ).rejects.toMatchObject({ code: 'UNKNOWN_PROVIDER' })
  const { sessionId } = await api('sessions.create', {
    cwd: h.workspace,
    route: { provider: 'scripted', model: 'scripted-1', effort: 'low' },
    preset: 'read-only',
  })
  const types = eventsOf(sessionId).map((event) => event.type)
  expect(types.slice(0, 2)).toEqual(['model/route', 'permission/preset'])
  expect(eventsOf(sessionId)[0]!.data).toEqual({ route: { provider: 'scripted', model: 'scripted-1', effort: 'low' } })
  const view = await api('sessions.open', { sessionId })
  expect(view).toMatchObject({
    preset: 'read-only',
    route: { provider: 'scripted', model: 'scripted-1' },
    agent: 'idle',
    lockedElsewhere: false,
  })
})

test('switching model and preset from the page appends their events', async () => {
  await boot()
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  await api('agent.setRoute', { sessionId, route: { provider: 'scripted', model: 'scripted-2' } })
  await api('agent.setPreset', { sessionId, preset: 'danger-full-access' })
  const log = eventsOf(sessionId)
  expect(log.filter((event) => event.type === 'model/route').at(-1)!.data).toEqual({
    route: { provider: 'scripted', model: 'scripted-2' },
  })
  expect(log.find((event) => event.type === 'permission/preset')!.data).toMatchObject({ preset: 'danger-full-access' })
  await expect(api('agent.setPreset', { sessionId, preset: 'yolo' })).rejects.toMatchObject({ code: 'UNKNOWN_PRESET' })
})

test('cancel stops a running turn and the log says it was aborted', async () => {
  await boot([{ text: 'thinking very hard', hang: true }])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const t = await tab()
  t.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'go' })
  await t.until(() => t.events(sessionId).some((event) => event.type === 'assistant/chunk'), 'streaming to start')
  expect(await api('agent.cancel', { sessionId })).toEqual({ cancelled: true })
  await t.until(() => t.events(sessionId).some((event) => event.type === 'turn/end'), 'the turn to end')
  expect(t.events(sessionId).find((event) => event.type === 'turn/end')!.data.reason).toBe('aborted')
  expect(await api('agent.cancel', { sessionId })).toEqual({ cancelled: false })
  await t.close()
})

test('a stored session is paged without being taken over, resumed by a message, and forked at a turn', async () => {
  await boot([{ text: 'alpha reply' }, { text: 'beta reply' }])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  await api('agent.send', { sessionId, text: 'alpha question' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  await h.root.agents.bySession(sessionId)!.dispose()
  expect(h.root.sessions.get(sessionId)).toBeUndefined()

  const view = await api('sessions.open', { sessionId })
  expect(view.agent).toBeNull()
  const page = await api('sessions.page', { sessionId })
  expect(page.events.map((event: WireEvent) => event.type)).toContain('assistant/message')
  expect(h.root.sessions.get(sessionId)).toBeUndefined()
  const hits = (await api('sessions.search', { query: 'ALPHA reply' })).hits
  expect(hits).toEqual([
    expect.objectContaining({ sessionId, field: 'text', snippet: expect.stringContaining('alpha reply') }),
  ])
  // The full-text index marks the words and names the event they are in.
  const said = page.events.find((event: WireEvent) => event.type === 'assistant/message')!
  expect(hits[0].seq).toBe(said.seq)
  expect(
    hits[0].highlights.map(({ start, end }: { start: number; end: number }) =>
      hits[0].snippet.slice(start, end).toLowerCase(),
    ),
  ).toEqual(['alpha', 'reply'])

  const turnEnd = page.events.find((event: WireEvent) => event.type === 'turn/end')!.seq
  const { sessionId: forkId } = await api('sessions.fork', { sessionId, atSeq: turnEnd })
  expect(eventsOf(forkId)).toHaveLength(turnEnd + 1)
  await expect(api('sessions.fork', { sessionId, atSeq: 1 })).rejects.toMatchObject({ code: 'FORK_INSIDE_TURN' })

  await api('agent.send', { sessionId, text: 'beta question' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  expect(eventsOf(sessionId).filter((event) => event.type === 'turn/end')).toHaveLength(2)
  const listed = (await api('sessions.list')).sessions
  expect(listed.map((item: { id: string }) => item.id).sort()).toEqual([sessionId, forkId].sort())
})

test('a message sent while a turn runs steers it: the model reads it at its next step, in the same turn', async () => {
  await boot([{ toolCalls: [{ name: 'wait', arguments: { ms: 400, label: 'slow' } }] }, { text: 'steered' }])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const t = await tab()
  t.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'start' })
  await t.until(() => t.events(sessionId).some((event) => event.type === 'tool/dispatched'), 'the tool to start')
  await api('agent.send', { sessionId, text: 'use tabs, not spaces', mode: 'steer' })
  const result = await h.root.agents.bySession(sessionId)!.whenIdle()
  expect(result).toMatchObject({ reason: 'completed', text: 'steered' })
  const users = eventsOf(sessionId).filter((event) => event.type === 'user/message')
  expect(users.map((event) => event.data)).toEqual([
    expect.objectContaining({ source: 'user' }),
    expect.objectContaining({ source: 'steer', content: [{ type: 'text', text: 'use tabs, not spaces' }] }),
  ])
  expect(eventsOf(sessionId).filter((event) => event.type === 'turn/start')).toHaveLength(1)
  expect(h.root.scriptedLlm.requests[1]!.messages.at(-1)).toEqual({
    role: 'user',
    content: [{ type: 'text', text: 'use tabs, not spaces' }],
  })
  await t.close()
})

test('models.list says which providers have a key, naming a missing one and never a value', async () => {
  // Key names no environment holds: one saved in the home, one set nowhere (process.env is left alone).
  const keys = `
- id: llm-deepseek
  config: { apiKeyName: WEB_SESSIONS_TEST_DEEPSEEK_KEY }
- id: llm-anthropic
  config: { apiKeyName: WEB_SESSIONS_TEST_ANTHROPIC_KEY }
`
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    patch: PATCH + keys,
    homeFiles: { '.credentials.yaml': 'WEB_SESSIONS_TEST_DEEPSEEK_KEY: sk-web-sessions-saved-value\n' },
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
  const { providers } = await api<{
    providers: { provider: string; ready: boolean; notReady?: { code: string; message: string } }[]
  }>('models.list')
  const byName = new Map(providers.map((entry) => [entry.provider, entry]))
  expect(byName.get('deepseek')).toMatchObject({ ready: true })
  expect(byName.get('deepseek')!.notReady).toBeUndefined()
  expect(byName.get('scripted')).toMatchObject({ ready: true })
  expect(byName.get('anthropic')).toMatchObject({
    ready: false,
    notReady: { code: 'CREDENTIAL_MISSING', message: expect.stringContaining('WEB_SESSIONS_TEST_ANTHROPIC_KEY') },
  })
  expect(JSON.stringify(providers)).not.toContain('sk-web-sessions-saved-value')
})

// Idle agents are released quickly here; by default after ten minutes.
const RELEASE_SOON = '- id: web-sessions\n  config: { idleReleaseMs: 100 }\n'

/** Waits until `sessionId` has no live agent in this composition (its log closed, its lease freed). */
async function released(sessionId: string) {
  const deadline = Date.now() + 30_000
  while (h.root.sessions.get(sessionId)) {
    if (Date.now() > deadline) throw new Error(`the agent of ${sessionId} was not released`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test('an idle agent no tab watches is released: a terminal can resume its session, and the next message reopens it', async () => {
  await boot([{ text: 'first answer' }, { text: 'second answer' }], RELEASE_SOON)
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const t = await tab()
  t.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'one' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  // Watched by a tab, an idle agent stays however long it idles.
  await new Promise((resolve) => setTimeout(resolve, 400))
  expect(h.root.agents.bySession(sessionId)?.status).toBe('idle')

  await t.close()
  await released(sessionId)
  expect(h.root.agents.bySession(sessionId)).toBeUndefined()
  const terminal = await bootComposition({ home: h.home, workspace: h.workspace, patch: scriptedPatch() })
  try {
    const resumed = await terminal.root.agents.resume(sessionId)
    expect(resumed.session.events.filter((event) => event.type === 'turn/end')).toHaveLength(1)
    await resumed.dispose()
  } finally {
    await terminal.dispose()
  }

  await api('agent.send', { sessionId, text: 'two' })
  const result = await h.root.agents.bySession(sessionId)!.whenIdle()
  expect(result).toMatchObject({ reason: 'completed', text: 'second answer' })
  expect(eventsOf(sessionId).filter((event) => event.type === 'turn/end')).toHaveLength(2)
})

test('closing every tab leaves a running turn running; its agent is released only once the turn has ended', async () => {
  await boot(
    [{ toolCalls: [{ name: 'wait', arguments: { ms: 500, label: 'slow' } }] }, { text: 'finished' }],
    RELEASE_SOON,
  )
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const t = await tab()
  t.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'take your time' })
  await t.until(() => t.events(sessionId).some((event) => event.type === 'tool/dispatched'), 'the tool to start')
  await t.close()
  const result = await h.root.agents.bySession(sessionId)!.whenIdle()
  expect(result).toMatchObject({ reason: 'completed', text: 'finished' })
  await released(sessionId)
})

test('a scripted model calls an MCP server tool through the web surface: the tab sees the call and the server answer', async () => {
  const server = join(import.meta.dirname, '../../../mcp/mcp-client/src/fixtures/test-server.mjs')
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    patch: PATCH,
    homeFiles: {
      'mcp.yaml': `mcpServers:\n  t: { command: ${process.execPath}, args: [${JSON.stringify(server)}], trust: allow }\n`,
    },
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
  h.root.scriptedLlm.enqueue(toolCall('m1', 'mcp__t__echo', { text: 'from the web' }), { text: 'echoed' })
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  const watcher = await tab()
  watcher.subscribe('session', sessionId, { since: 0 })
  await api('agent.send', { sessionId, text: 'echo something' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  const results = () => watcher.events(sessionId).filter((event) => event.type === 'tool/result')
  await watcher.until(() => results().length > 0, 'the MCP tool result on the tab')
  expect(results()[0]!.data).toMatchObject({ callId: 'm1', content: [{ type: 'text', text: 'echo: from the web' }] })
  expect(eventsOf(sessionId).find((event) => event.type === 'tool/call')?.data).toMatchObject({ name: 'mcp__t__echo' })
  await watcher.close()
})

test('the sidebar renames a session and deletes it: the list, the search and the disk forget it; a running one is refused', async () => {
  await boot([{ text: 'the numbat answer' }, { text: 'working', hang: true }])
  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  await api('agent.send', { sessionId, text: 'numbat question' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  const watcher = await tab()
  watcher.subscribe('sessions', '*')

  expect(await api('sessions.rename', { sessionId, title: ' Numbats\n and more ' })).toEqual({
    title: 'Numbats and more',
  })
  expect((await api('sessions.list')).sessions.find((item: { id: string }) => item.id === sessionId)).toMatchObject({
    title: 'Numbats and more',
  })
  await expect(api('sessions.rename', { sessionId, title: ' ' })).rejects.toMatchObject({ code: 'INVALID_TITLE' })

  const { sessionId: busy } = await api('sessions.create', { cwd: h.workspace })
  await api('agent.send', { sessionId: busy, text: 'keep going' })
  await expect.poll(() => h.root.agents.bySession(busy)?.running).toBe(true)
  await expect(api('sessions.delete', { sessionId: busy })).rejects.toMatchObject({ code: 'SESSION_RUNNING' })
  await api('agent.cancel', { sessionId: busy })

  // The web app holds the idle agent of the session it created: the delete lets it go.
  expect(await api('sessions.delete', { sessionId })).toEqual({ deleted: [sessionId] })
  await watcher.until(
    () =>
      watcher.frames.some(
        (frame) => frame.ch === 'sessions' && frame.type === 'changed' && frame.sessionId === sessionId,
      ),
    'the change frame',
  )
  expect((await api('sessions.list')).sessions.map((item: { id: string }) => item.id)).not.toContain(sessionId)
  expect((await api('sessions.search', { query: 'numbat' })).hits).toEqual([])
  const stores = join(h.home, 'sessions')
  expect(readdirSync(stores).filter((key) => existsSync(join(stores, key, sessionId)))).toEqual([])
  await expect(api('sessions.open', { sessionId })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  await expect(api('sessions.delete', { sessionId: '../../etc' })).rejects.toMatchObject({ code: 'INVALID_ID' })
  await watcher.close()
})

test("a new session in dsh's home or inside it is refused, even where the picker may browse (docs/security.md)", async () => {
  // The home is made openable (as when DSH_HOME lies under the user's home): the session service still refuses.
  const home = tempDir('dsh-home-')
  mkdirSync(join(home, 'skills'))
  onTestFinished(() => rmSync(home, { recursive: true, force: true }))
  h = await bootComposition({ profile: 'web', home, argv: ['--port', '0', '--allow-root', home], patch: PATCH })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
  for (const cwd of [home, join(home, 'skills')]) {
    await expect(api('sessions.create', { cwd })).rejects.toMatchObject({
      code: 'WORKSPACE_REFUSED',
      message: expect.stringContaining("is dsh's home ($DSH_HOME"),
    })
  }
  expect(await h.root.sessions.list()).toEqual([])
})
