import { createHmac } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { cookieName } from '@dsh/webserver'
import { removeHome, signIn, startWeb, type WebProcess } from './test-support/web.ts'

// A sign-in outlives the process that made it (docs/security.md, "Web"): real `dsh --profile web`
// processes, one after another on the same DSH_HOME and port, with no browser (the cookie is sent by hand).
let web: WebProcess | undefined
afterAll(async () => {
  await web?.stop()
  if (web) removeHome(web)
})

async function get(origin: string, path: string, cookie: string) {
  const response = await fetch(`${origin}${path}`, {
    method: path.startsWith('/api/') ? 'POST' : 'GET',
    headers: { cookie, 'content-type': 'application/json' },
    body: path.startsWith('/api/') ? '{}' : undefined,
  })
  return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() }
}

/** A cookie value the way dsh signs one, with the key the test reads from DSH_HOME (to set an expiry in the past). */
function forged(key: string, expiresAt: number): string {
  const id = 'AAAAAAAAAAAAAAAAAAAAAA'
  const mac = createHmac('sha256', Buffer.from(key.trim(), 'hex'))
    .update(`dsh-web-session/1\0${id}\0${expiresAt}`)
    .digest('base64url')
  return `${id}.${expiresAt}.${mac}`
}

test('a cookie issued by one dsh web is accepted by the next on the same DSH_HOME, refused once expired and after sign-out, and a refused page load is a styled page saying what to do', async () => {
  web = await startWeb()
  await signIn(web)
  const cookie = web.cookie!
  const port = new URL(web.origin).port
  const keyFile = join(web.dshHome, 'web.key')
  expect(statSync(keyFile).mode & 0o777).toBe(0o600)
  const key = readFileSync(keyFile, 'utf8')
  expect((await get(web.origin, '/api/host.info', cookie)).status).toBe(200)

  await web.stop()
  web = await startWeb({ home: web.home, workspace: web.workspace, args: ['--port', port] })
  expect(new URL(web.origin).port).toBe(port)
  const info = await get(web.origin, '/api/host.info', cookie)
  expect(info.status).toBe(200)
  expect((await get(web.origin, '/', cookie)).type).toContain('text/html')

  // Signed with the kept key but past its expiry: refused, and a page load says what to do.
  const name = cookieName(Number(port))
  const expired = `${name}=${forged(key, Date.now() - 1000)}`
  const refused = await get(web.origin, '/api/host.info', expired)
  expect(refused.status).toBe(401)
  expect(JSON.parse(refused.text).error).toMatchObject({
    code: 'SIGN_IN_INVALID',
    message: expect.stringContaining('expired'),
  })
  const page = await get(web.origin, '/', expired)
  expect(page.status).toBe(401)
  expect(page.type).toContain('text/html')
  expect(page.text).toContain('<style>')
  expect(page.text).toContain('run <code>dsh web</code>')
  expect(page.text).not.toContain(key.trim())
  expect(page.text).not.toContain('<script')
  // The same shape with a future expiry is accepted: the refusal above was the expiry, not the forgery.
  expect((await get(web.origin, '/api/host.info', `${name}=${forged(key, Date.now() + 60_000)}`)).status).toBe(200)

  // Sign out in this process: refused here, and by the next process on this DSH_HOME.
  const out = await fetch(`${web.origin}/auth/sign-out`, { method: 'POST', headers: { cookie, origin: web.origin } })
  expect(out.status).toBe(200)
  expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
  expect(JSON.parse((await get(web.origin, '/api/host.info', cookie)).text).error.message).toContain('signed out')
  await web.stop()
  web = await startWeb({ home: web.home, workspace: web.workspace, args: ['--port', port] })
  const after = await get(web.origin, '/api/host.info', cookie)
  expect(after.status).toBe(401)
  expect(JSON.parse(after.text).error.message).toContain('signed out')
  expect((await get(web.origin, '/', cookie)).text).toContain('This browser is not signed in to dsh web')
}, 180_000)
