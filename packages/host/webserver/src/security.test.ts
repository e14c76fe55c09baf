import { request } from 'node:http'
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { WS_PROTOCOL } from '@dsh/web-protocol'
import { cookieName, signInWithLink } from './index.ts'

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
function http(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'POST', headers: { 'content-type': 'application/json', ...options.headers } },
      (res) => {
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
      },
    )
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

/** Opens a WebSocket and reports how the upgrade went: the selected protocol, or the refusal's status. */
function upgrade(
  url: string,
  protocols: string[],
  headers: Record<string, string> = {},
): Promise<{ opened: boolean; protocol?: string; status?: number }> {
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
  let cookie: string
  let host: string
  const auth = () => ({ cookie })

  beforeAll(async () => {
    h = await bootComposition({ profile: 'web', argv: ['--port', '0', '--no-open'], patch: QUIET })
    await h.root.webserver.start()
    origin = h.root.webserver.url
    cookie = await signInWithLink(h.root.webserver.newLink())
    host = new URL(origin).host
  })
  afterAll(() => h?.dispose())

  test("a call with the sign-in cookie, from the page's own origin, is answered", async () => {
    const reply = await http(`${origin}/api/sessions.list`, {
      headers: { ...auth(), origin, 'sec-fetch-site': 'same-origin' },
      body: {},
    })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ ok: true, result: { sessions: [] } })
  })

  test('a request naming a foreign Host is refused (DNS rebinding)', async () => {
    const reply = await http(`${origin}/api/sessions.list`, {
      headers: { ...auth(), host: `evil.example:${new URL(origin).port}` },
      body: {},
    })
    expect(reply.status).toBe(421)
    expect(reply.body.error).toMatchObject({ code: 'HOST_REFUSED' })
    const page = await http(`${origin}/`, { method: 'GET', headers: { host: 'evil.example' } })
    expect(page.status).toBe(421)
  })

  test('a cross-site request is refused by its Origin and by Sec-Fetch-Site', async () => {
    const foreign = await http(`${origin}/api/sessions.list`, {
      headers: { ...auth(), origin: 'http://evil.example' },
      body: {},
    })
    expect(foreign.status).toBe(403)
    expect(foreign.body.error.code).toBe('ORIGIN_REFUSED')
    const otherPort = await http(`${origin}/api/sessions.list`, {
      headers: { ...auth(), origin: 'http://127.0.0.1:1' },
      body: {},
    })
    expect(otherPort.status).toBe(403)
    const site = await http(`${origin}/api/sessions.list`, {
      headers: { ...auth(), 'sec-fetch-site': 'cross-site' },
      body: {},
    })
    expect(site.status).toBe(403)
  })

  test("an API call without the cookie, with a forged one or with another port's, is refused", async () => {
    const none = await http(`${origin}/api/sessions.list`, { headers: { origin }, body: {} })
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe('SIGN_IN_REQUIRED')
    const value = cookie.slice(cookie.indexOf('=') + 1)
    const forged = await http(`${origin}/api/sessions.list`, {
      headers: { origin, cookie: `${cookieName(h.root.webserver.port)}=${value.slice(1)}x` },
      body: {},
    })
    expect(forged.status).toBe(401)
    expect(forged.body.error.code).toBe('SIGN_IN_INVALID')
    const otherPort = await http(`${origin}/api/sessions.list`, {
      headers: { origin, cookie: `${cookieName(h.root.webserver.port + 1)}=${value}` },
      body: {},
    })
    expect(otherPort.body.error.code).toBe('SIGN_IN_REQUIRED')
    const bearer = await http(`${origin}/api/sessions.list`, {
      headers: { origin, authorization: `Bearer ${value}` },
      body: {},
    })
    expect(bearer.body.error.code).toBe('SIGN_IN_REQUIRED')
  })

  test('the event stream opens only with the cookie, the right Host and a same-origin Origin', async () => {
    const ws = origin.replace('http:', 'ws:') + '/ws'
    const good = [WS_PROTOCOL]
    expect(await upgrade(ws, good, { origin, cookie })).toEqual({ opened: true, protocol: WS_PROTOCOL })
    expect(await upgrade(ws, good, { origin })).toMatchObject({ opened: false, status: 401 })
    expect(await upgrade(ws, good, { origin, cookie: `${cookie}x` })).toMatchObject({ opened: false, status: 401 })
    expect(await upgrade(ws, good, { origin: 'http://evil.example', cookie })).toMatchObject({
      opened: false,
      status: 403,
    })
    expect(await upgrade(ws, good, { cookie })).toMatchObject({ opened: false, status: 403 })
    expect(
      await upgrade(ws, good, {
        origin: `http://evil.example:${new URL(origin).port}`,
        host: `evil.example:${new URL(origin).port}`,
        cookie,
      }),
    ).toMatchObject({ opened: false, status: 421 })
  })

  test('the page and its files are served only to a signed-in browser', async () => {
    const stranger = await http(`${origin}/`, { method: 'GET', headers: { host } })
    expect(stranger.status).toBe(401)
    expect(stranger.headers['content-type']).toContain('text/html')
    expect(stranger.body).toContain('Open the sign-in link it prints')
    expect((await http(`${origin}/favicon.svg`, { method: 'GET', headers: { host } })).status).toBe(401)
  })

  test('the page is served with a policy that keeps it to its own origin', async () => {
    const page = await http(`${origin}/`, { method: 'GET', headers: { host, cookie } })
    expect([200, 503]).toContain(page.status)
    if (page.status === 200) {
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'")
      expect(page.headers['cache-control']).toBe('no-store')
    }
    expect(page.headers['x-frame-options']).toBe('DENY')
  })

  /** Opens a link the way a browser does once challenged: its userinfo as `Authorization: Basic`. */
  const openLink = (link: string, headers: Record<string, string> = {}) => {
    const url = new URL(link)
    const basic = Buffer.from(`${url.username}:${url.password}`).toString('base64')
    return http(`${url.origin}${url.pathname}`, {
      method: 'GET',
      headers: { authorization: `Basic ${basic}`, 'sec-fetch-site': 'none', ...headers },
    })
  }

  test('a link signs a browser in once: an HttpOnly SameSite=Strict cookie and a redirect to the bare origin', async () => {
    const link = h.root.webserver.newLink()
    expect(link).toMatch(new RegExp(`^http://dsh:[\\w-]{43}@${host.replace(/\./g, '\\.')}/auth/link$`))
    const first = await openLink(link)
    expect(first.status).toBe(303)
    expect(first.headers.location).toBe(`${origin}/`)
    const [setCookie] = first.headers['set-cookie'] as string[]
    expect(setCookie).toMatch(
      new RegExp(
        `^${cookieName(h.root.webserver.port)}=[\\w-]{22}\\.\\d+\\.[\\w-]{43}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000$`,
      ),
    )
    const signedIn = setCookie!.split(';')[0]!
    expect(
      (await http(`${origin}/api/sessions.list`, { headers: { cookie: signedIn, origin }, body: {} })).status,
    ).toBe(200)
    const again = await openLink(link)
    expect(again.status).toBe(403)
    expect(again.headers['set-cookie']).toBeUndefined()
    // A person sees this page: styled HTML saying what to do.
    expect(again.headers['content-type']).toContain('text/html')
    expect(again.body).toContain(
      'this link was used; run <code>dsh web</code> again, or press Enter in the terminal running it, for a new link',
    )
  })

  test('a link without its code is challenged for it; a made-up code is refused', async () => {
    const bare = await http(`${origin}/auth/link`, { method: 'GET', headers: { host } })
    expect(bare.status).toBe(401)
    expect(bare.headers['www-authenticate']).toMatch(/^Basic realm="dsh web/)
    const madeUp = await openLink(`http://dsh:${'A'.repeat(43)}@${host}/auth/link`)
    expect(madeUp.status).toBe(403)
    expect(madeUp.body).toContain('this link is not from this launch of dsh web')
  })

  test('another site cannot sign a browser in with a link, and its attempt does not spend the code', async () => {
    const link = h.root.webserver.newLink()
    const crossSite = await openLink(link, { 'sec-fetch-site': 'cross-site' })
    expect(crossSite.status).toBe(403)
    expect(crossSite.headers['set-cookie']).toBeUndefined()
    const rebound = await openLink(link, { host: `evil.example:${h.root.webserver.port}` })
    expect(rebound.status).toBe(421)
    expect((await openLink(link)).status).toBe(303)
  })

  test('a signed-in browser opening a spent link goes straight to the app', async () => {
    const link = h.root.webserver.newLink()
    const cookieOf = await signInWithLink(link)
    const reopened = await openLink(link, { cookie: cookieOf })
    expect(reopened.status).toBe(303)
    expect(reopened.headers.location).toBe(`${origin}/`)
    expect(reopened.headers['set-cookie']).toBeUndefined()
  })

  test('an unknown method and bad params answer with a typed error', async () => {
    const unknown = await http(`${origin}/api/nope.nothing`, { headers: { ...auth(), origin }, body: {} })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('UNKNOWN_METHOD')
    const bad = await http(`${origin}/api/sessions.page`, { headers: { ...auth(), origin }, body: { sessionId: 7 } })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'BAD_PARAMS', message: expect.stringContaining('sessionId') })
  })

  test("every plugin's params are checked against the one wire schema, naming the field, before the method runs", async () => {
    const call = (method: string, body: unknown) =>
      http(`${origin}/api/${method}`, { headers: { ...auth(), origin }, body })
    const sessionsBefore = (await h.root.sessions.list()).length
    const refusals: Array<[string, unknown, string]> = [
      ['sessions.create', { route: { provider: 'x', model: 'y' } }, 'sessions.create: cwd:'],
      ['sessions.page', { sessionId: 's', limit: 0 }, 'sessions.page: limit:'],
      [
        'agent.send',
        { sessionId: 's', text: 'hi', images: [{ mediaType: 'image/png' }] },
        'agent.send: images.0.data:',
      ],
      ['attachments.get', { sessionId: 's', sha256: '../../../etc/passwd' }, 'attachments.get: sha256:'],
      ['approvals.answer', { requestId: 'r', answer: 'allow_forever' }, 'approvals.answer: answer:'],
      ['settings.set', { key: 42, value: true }, 'settings.set: key:'],
      ['files.list', { path: ['/'] }, 'files.list: path:'],
      ['sessions.search', ['query'], 'sessions.search: params:'],
      // The wire schema knows effort only as a string; web-sessions checks it against @dsh/llm's efforts.
      [
        'agent.setRoute',
        { sessionId: 's', route: { provider: 'scripted', model: 'm', effort: 'ludicrous' } },
        'route.effort:',
      ],
    ]
    for (const [method, body, field] of refusals) {
      const reply = await call(method, body)
      expect(reply.status, method).toBe(400)
      expect(reply.body.error.code, method).toBe('BAD_PARAMS')
      expect(reply.body.error.message, method).toContain(field)
    }
    // Nothing ran: no session was created by the refused sessions.create.
    expect((await h.root.sessions.list()).length).toBe(sessionsBefore)
  })

  test('a method missing from WEB_METHOD_SCHEMAS cannot be registered', () => {
    expect(() => h.root.webserver.method(h.root, 'debug.eval' as never, { handle: () => 'ran' })).toThrow(
      /"debug\.eval" is not in WEB_METHOD_SCHEMAS/,
    )
  })
})

/** This machine's first non-loopback IPv4 address, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address

describe('a host exposed beyond loopback', () => {
  test('--host refuses an address that is neither loopback nor trusted', async () => {
    await expect(
      bootComposition({ profile: 'web', argv: ['--host', '0.0.0.0', '--port', '0'], patch: QUIET }),
    ).rejects.toThrow(/binds loopback only.*trustedHosts/s)
  })

  test.skipIf(!lanAddress)(
    'settings and credential writes from a non-loopback peer are refused, reads are answered',
    async () => {
      const h = await bootComposition({
        profile: 'web',
        argv: ['--host', lanAddress!, '--port', '0'],
        patch: `${QUIET}\n- id: webserver\n  config: { announce: false, open: false, trustedHosts: ['${lanAddress}'] }\n`,
      })
      await h.root.webserver.start()
      try {
        const origin = h.root.webserver.url
        const headers = { cookie: await signInWithLink(h.root.webserver.newLink()), origin }
        const read = await http(`${origin}/api/settings.list`, { headers, body: {} })
        expect(read.status).toBe(200)
        const write = await http(`${origin}/api/settings.set`, {
          headers,
          body: { key: 'web.defaultPreset', value: 'read-only' },
        })
        expect(write.status).toBe(403)
        expect(write.body.error).toMatchObject({ code: 'LOCAL_ONLY', message: expect.stringContaining(lanAddress!) })
        const key = await http(`${origin}/api/credentials.set`, {
          headers,
          body: { name: 'DEEPSEEK_API_KEY', value: 'sk-from-afar' },
        })
        expect(key.status).toBe(403)
        expect(h.root.settings.get('web.defaultPreset' as never)).toBe('')
        expect((await h.root.credentials.describe('DEEPSEEK_API_KEY')).source).not.toBe('home-file')
      } finally {
        await h.dispose()
      }
    },
  )
})
