import { request } from 'node:http'
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { WS_PROTOCOL, WS_TOKEN_PREFIX } from '@dsh/web-protocol'
import type {} from './index.ts'

// The real web profile, in process: the host, its API plugins and the app row, on a free loopback port.
const QUIET = `
- id: webserver
  config: { announce: false, open: false }
`

interface Reply {
  status: number
  body: any
  headers: Record<string, string | string[] | undefined>
}

/** A raw HTTP call, so the test controls every header (fetch would not let it set Host). */
function http(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'POST', headers: { 'content-type': 'application/json', ...options.headers } }, (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => {
        let body: any = text
        try {
          body = JSON.parse(text)
        } catch {
          // a refusal outside the API answers in plain text
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers })
      })
    })
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

/** Opens a WebSocket and reports how the upgrade went: the selected protocol, or the refusal's status. */
function upgrade(url: string, protocols: string[], headers: Record<string, string> = {}): Promise<{ opened: boolean; protocol?: string; status?: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, protocols, { headers })
    socket.on('open', () => {
      resolve({ opened: true, protocol: socket.protocol })
      socket.close()
    })
    socket.on('unexpected-response', (_req, res) => {
      resolve({ opened: false, status: res.statusCode })
      res.resume()
    })
    socket.on('error', () => resolve({ opened: false }))
  })
}

describe('the web host on loopback', () => {
  let h: Harness
  let origin: string
  let token: string
  let host: string
  const auth = () => ({ authorization: `Bearer ${token}` })

  beforeAll(async () => {
    h = await bootComposition({ profile: 'web', argv: ['--port', '0', '--no-open'], patch: QUIET })
    await h.root.webserver.start()
    origin = h.root.webserver.url
    token = h.root.webserver.token
    host = new URL(origin).host
  })
  afterAll(() => h?.dispose())

  test('a call with the token, from the page\'s own origin, is answered', async () => {
    const reply = await http(`${origin}/api/sessions.list`, { headers: { ...auth(), origin, 'sec-fetch-site': 'same-origin' }, body: {} })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ ok: true, result: { sessions: [] } })
  })

  test('a request naming a foreign Host is refused (DNS rebinding)', async () => {
    const reply = await http(`${origin}/api/sessions.list`, { headers: { ...auth(), host: `evil.example:${new URL(origin).port}` }, body: {} })
    expect(reply.status).toBe(421)
    expect(reply.body.error).toMatchObject({ code: 'HOST_REFUSED' })
    const page = await http(`${origin}/`, { method: 'GET', headers: { host: 'evil.example' } })
    expect(page.status).toBe(421)
  })

  test('a cross-site request is refused by its Origin and by Sec-Fetch-Site', async () => {
    const foreign = await http(`${origin}/api/sessions.list`, { headers: { ...auth(), origin: 'http://evil.example' }, body: {} })
    expect(foreign.status).toBe(403)
    expect(foreign.body.error.code).toBe('ORIGIN_REFUSED')
    const otherPort = await http(`${origin}/api/sessions.list`, { headers: { ...auth(), origin: 'http://127.0.0.1:1' }, body: {} })
    expect(otherPort.status).toBe(403)
    const site = await http(`${origin}/api/sessions.list`, { headers: { ...auth(), 'sec-fetch-site': 'cross-site' }, body: {} })
    expect(site.status).toBe(403)
  })

  test('an API call without the token, or with a wrong one, is refused', async () => {
    const none = await http(`${origin}/api/sessions.list`, { headers: { origin }, body: {} })
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe('TOKEN_REQUIRED')
    const wrong = await http(`${origin}/api/sessions.list`, { headers: { origin, authorization: `Bearer ${token.slice(1)}x` }, body: {} })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe('TOKEN_INVALID')
  })

  test('the event stream opens only with the token, the right Host and a same-origin Origin', async () => {
    const ws = origin.replace('http:', 'ws:') + '/ws'
    const good = [WS_PROTOCOL, `${WS_TOKEN_PREFIX}${token}`]
    expect(await upgrade(ws, good, { origin })).toEqual({ opened: true, protocol: WS_PROTOCOL })
    expect(await upgrade(ws, [WS_PROTOCOL], { origin })).toMatchObject({ opened: false, status: 401 })
    expect(await upgrade(ws, [WS_PROTOCOL, `${WS_TOKEN_PREFIX}wrong`], { origin })).toMatchObject({ opened: false, status: 401 })
    expect(await upgrade(ws, good, { origin: 'http://evil.example' })).toMatchObject({ opened: false, status: 403 })
    expect(await upgrade(ws, good, {})).toMatchObject({ opened: false, status: 403 })
    expect(await upgrade(ws, good, { origin: `http://evil.example:${new URL(origin).port}`, host: `evil.example:${new URL(origin).port}` })).toMatchObject({ opened: false, status: 421 })
  })

  test('the page is served without the token, with a policy that keeps it to its own origin', async () => {
    const page = await http(`${origin}/`, { method: 'GET', headers: { host } })
    expect([200, 503]).toContain(page.status)
    if (page.status === 200) {
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'")
      expect(page.headers['cache-control']).toBe('no-store')
    }
    expect(page.headers['x-frame-options']).toBe('DENY')
  })

  test('an unknown method and bad params answer with a typed error', async () => {
    const unknown = await http(`${origin}/api/nope.nothing`, { headers: { ...auth(), origin }, body: {} })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('UNKNOWN_METHOD')
    const bad = await http(`${origin}/api/sessions.page`, { headers: { ...auth(), origin }, body: { sessionId: 7 } })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'BAD_PARAMS', message: expect.stringContaining('sessionId') })
  })
})

/** This machine's first non-loopback IPv4 address, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address

describe('a host exposed beyond loopback', () => {
  test('--host refuses an address that is neither loopback nor trusted', async () => {
    await expect(bootComposition({ profile: 'web', argv: ['--host', '0.0.0.0', '--port', '0'], patch: QUIET })).rejects.toThrow(/binds loopback only.*trustedHosts/s)
  })

  test.skipIf(!lanAddress)('settings and credential writes from a non-loopback peer are refused, reads are answered', async () => {
    const h = await bootComposition({ profile: 'web', argv: ['--host', lanAddress!, '--port', '0'], patch: `${QUIET}\n- id: webserver\n  config: { announce: false, open: false, trustedHosts: ['${lanAddress}'] }\n` })
    await h.root.webserver.start()
    try {
      const origin = h.root.webserver.url
      const headers = { authorization: `Bearer ${h.root.webserver.token}`, origin }
      const read = await http(`${origin}/api/settings.list`, { headers, body: {} })
      expect(read.status).toBe(200)
      const write = await http(`${origin}/api/settings.set`, { headers, body: { key: 'web.defaultPreset', value: 'read-only' } })
      expect(write.status).toBe(403)
      expect(write.body.error).toMatchObject({ code: 'LOCAL_ONLY', message: expect.stringContaining(lanAddress!) })
      const key = await http(`${origin}/api/credentials.set`, { headers, body: { name: 'DEEPSEEK_API_KEY', value: 'sk-from-afar' } })
      expect(key.status).toBe(403)
      expect(h.root.settings.get('web.defaultPreset' as never)).toBe('')
      expect((await h.root.credentials.describe('DEEPSEEK_API_KEY')).source).not.toBe('home-file')
    } finally {
      await h.dispose()
    }
  })
})
