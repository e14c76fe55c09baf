// The web host's usage API against the real web composition (in process, scripted model), and the same
// numbers from the real `dsh usage --json` process reading the same DSH_HOME.
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { WEB_METHOD_SCHEMAS, checkWire } from '@dsh/web-protocol/schema'
import { signInWithLink } from '@dsh/webserver'

const PRICE = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 }
const DSH_BIN = join(dirname(createRequire(import.meta.url).resolve('@dsh/cli/package.json')), 'bin', 'dsh.js')

let h: Harness
let cookie: string
beforeAll(async () => {
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    patch: scriptedPatch({}, '- id: webserver\n  config: { announce: false, open: false }\n'),
    homeFiles: { 'settings.yaml': `usage.prices:\n  scripted/scripted-1: ${JSON.stringify(PRICE)}\n` },
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
  h.root.scriptedLlm.enqueue(
    { text: 'one', usage: { input: 1200, cacheRead: 300, cacheWrite: 100, output: 40 } },
    { text: 'two', usage: { input: 500, cacheRead: 0, output: 900 } },
  )
  await h.run('the first session')
  await h.run('still the first session')
}, 120_000)
afterAll(async () => h?.dispose())

async function api(method: string, params: unknown = {}, withCookie = true): Promise<{ status: number; body: any }> {
  const response = await fetch(`${h.root.webserver.url}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(withCookie ? { cookie } : {}) },
    body: JSON.stringify(params),
  })
  return { status: response.status, body: await response.json() }
}

test('usage.session is the logged tokens of the session and their cost at the configured price', async () => {
  const session = (await h.agent()).session
  const { body } = await api('usage.session', { sessionId: session.id })
  expect(body.ok).toBe(true)
  expect(checkWire(WEB_METHOD_SCHEMAS['usage.session'].result, body.result)).toBeUndefined()
  expect(body.result).toEqual({
    requests: 2,
    input: 1700,
    cacheRead: 300,
    cacheWrite: 100,
    output: 940,
    cost: expect.closeTo((1700 * 3 + 300 * 0.3 + 100 * 3.75 + 940 * 15) / 1_000_000, 12),
    // The header's cache figures: the share of input read from the provider's cache and what it saved.
    cacheHitShare: 300 / 2100,
    cacheSaved: expect.closeTo((300 * (3 - 0.3)) / 1_000_000, 12),
    unpriced: [],
    // The last turn's own: no cache hit in it.
    turn: {
      requests: 1,
      input: 500,
      cacheRead: 0,
      cacheWrite: 0,
      output: 900,
      cost: expect.closeTo((500 * 3 + 900 * 15) / 1_000_000, 12),
      cacheHitShare: 0,
      cacheSaved: 0,
      unpriced: [],
    },
  })
})

test('usage.report has the same groups and totals as `dsh usage --json` on the same home, for each grouping', async () => {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: h.home, DSH_HOME: h.home }
  for (const by of ['model', 'workspace', 'day'] as const) {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [DSH_BIN, 'usage', '--json', '--all-workspaces', '--by', by],
      { cwd: h.workspace, env },
    )
    const cli = JSON.parse(stdout)
    const { body } = await api('usage.report', { by })
    expect(body.ok).toBe(true)
    expect(checkWire(WEB_METHOD_SCHEMAS['usage.report'].result, body.result)).toBeUndefined()
    expect(body.result).toEqual({ sessions: cli.sessions, groups: cli.groups, total: cli.total, damaged: cli.damaged })
    expect(body.result.total.requests).toBe(2)
  }
  const { body: scoped } = await api('usage.report', { by: 'model', cwd: join(h.workspace, 'elsewhere') })
  expect(scoped.result).toMatchObject({ sessions: 0, groups: [], total: { requests: 0 } })
}, 120_000)

test('usage needs a signed-in tab and names a session that does not exist', async () => {
  expect((await api('usage.report', { by: 'model' }, false)).status).toBe(401)
  const missing = await api('usage.session', { sessionId: 'no-such-session' })
  expect(missing.status).toBe(404)
  expect(missing.body.error.message).toContain('no-such-session')
  const bad = await api('usage.report', { by: 'tool' })
  expect(bad.status).toBe(400)
})
