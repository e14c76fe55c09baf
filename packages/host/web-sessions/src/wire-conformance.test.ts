// What the real web host sends matches @dsh/web-protocol's schemas, the one description its types (and the
// browser app's) are derived from: the results of the methods a tab uses and every WebSocket frame.
import { afterEach, expect, test } from 'vitest'
import WebSocket from 'ws'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { WS_PROTOCOL, type MethodName } from '@dsh/web-protocol'
import { signInWithLink } from '@dsh/webserver'
import { FrameSchema, WEB_METHOD_SCHEMAS, checkWire } from '@dsh/web-protocol/schema'
import type {} from '@dsh/webserver'

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

let h: Harness | undefined
afterEach(async () => h?.dispose())

test('every method result and every frame of a session with an approval matches its schema', async () => {
  h = await bootComposition({ profile: 'web', argv: ['--port', '0'], patch: PATCH })
  const server = h.root.webserver
  await server.start()
  const cookie = await signInWithLink(server.newLink())
  h.root.scriptedLlm.enqueue(
    { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'protected/a.txt', text: 'ok' } }] },
    { text: 'wrote it' },
  )
  const results: [MethodName, unknown][] = []
  const api = async (method: MethodName, params: unknown = {}) => {
    const response = await fetch(`${server.url}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(params),
    })
    const body = (await response.json()) as any
    expect(body.ok, `${method}: ${JSON.stringify(body.error)}`).toBe(true)
    results.push([method, body.result])
    return body.result
  }
  const frames: unknown[] = []
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/ws`, [WS_PROTOCOL], {
    origin: server.url,
    headers: { cookie },
  })
  socket.on('message', (data) => frames.push(...(JSON.parse(String(data)) as unknown[])))
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))

  const { sessionId } = await api('sessions.create', { cwd: h.workspace })
  socket.send(JSON.stringify({ op: 'sub', ch: 'session', key: sessionId, params: { since: 0 } }))
  socket.send(JSON.stringify({ op: 'sub', ch: 'sessions', key: '*' }))
  await api('agent.send', { sessionId, text: 'write the protected file' })
  const deadline = Date.now() + 30_000
  let requestId: string | undefined
  while (!(requestId = (await api('sessions.open', { sessionId })).pendingApprovals[0])) {
    if (Date.now() > deadline) throw new Error('no approval was asked')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await api('approvals.answer', { requestId, answer: 'allow_once' })
  await h.root.agents.bySession(sessionId)!.whenIdle()
  for (const method of [
    'sessions.list',
    'host.info',
    'models.list',
    'presets.list',
    'settings.list',
    'credentials.list',
    'composition.get',
    'files.list',
  ] as const)
    await api(method)
  await api('sessions.page', { sessionId })
  await api('sessions.search', { query: 'protected' })
  await api('sessions.fork', { sessionId, atSeq: h.root.sessions.get(sessionId)!.events.length - 1 })
  await new Promise((resolve) => setTimeout(resolve, 200))
  socket.close()

  for (const [method, result] of results)
    expect(
      checkWire(WEB_METHOD_SCHEMAS[method].result, result),
      `${method}: ${JSON.stringify(result).slice(0, 300)}`,
    ).toBeUndefined()
  expect(frames.length).toBeGreaterThan(5)
  for (const frame of frames) expect(checkWire(FrameSchema, frame), JSON.stringify(frame).slice(0, 300)).toBeUndefined()
})
