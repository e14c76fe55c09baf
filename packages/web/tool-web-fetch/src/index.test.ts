import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type {} from '@dsh/approval'
import type NetworkProxy from '@dsh/network-proxy'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

/** A real HTTP server on the host's loopback that records every request it ever saw. */
async function recordingServer(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: string[] = []
  let connections = 0
  const server = createServer((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`)
    handler(req, res)
  })
  server.on('connection', () => void connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    seen,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

const ARTICLE = `<!doctype html><html><head><title>The Test Page</title><style>body{color:red}</style></head><body>
<nav><a href="/home">Home</a> <a href="/about">About</a></nav>
<article><h1>Readable heading</h1>
<p>This is the first paragraph of a long enough article so that Readability keeps it as the main content of the page, with <a href="/more">a relative link</a> and <strong>bold words</strong>.</p>
<p>A second paragraph keeps the article long enough to be recognised as one. It talks about nothing in particular, at length, for the benefit of the scorer.</p>
<ul><li>one item</li><li>another item</li></ul>
<script>alert("never shown")</script>
</article><footer>footer text</footer></body></html>`

let server: Awaited<ReturnType<typeof recordingServer>>
let h: Harness

beforeAll(async () => {
  server = await recordingServer((req, res) => {
    const path = req.url ?? '/'
    if (path === '/page') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE)
    if (path === '/data.json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"a": [1, 2]}')
    if (path === '/gzip')
      return res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        .end(gzipSync('compressed text'))
    if (path === '/big') return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(50_000))
    if (path === '/loop') return res.writeHead(307, { location: '/loop' }).end()
    if (path === '/silent') return // never answers: not even the status line
    if (path === '/slow') return void res.writeHead(200, { 'content-type': 'text/plain' }).write('first part, ')
    if (path === '/to-loopback') return res.writeHead(302, { location: `http://127.0.0.1:${server.port}/page` }).end()
    if (path === '/to-page') return res.writeHead(301, { location: '/page' }).end()
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here')
  })
  h = await bootComposition({
    patch: scriptedPatch(
      {},
      `- id: tool-web-fetch\n  disabled: false\n  config: { maxBytes: 10000, timeoutMs: 2000 }\n`,
    ),
    // An exact name for the test server, and the widest wildcard: it must still admit no private address.
    homeFiles: { 'settings.yaml': 'network.allow: [api.test, "*"]\n' },
  })
  ;(h.root.network as NetworkProxy).useResolver(h.root, async (host) => {
    const names: Record<string, string> = {
      'api.test': '127.0.0.1',
      'rebind.example.org': '127.0.0.1',
      'meta.example.org': '169.254.169.254',
    }
    if (names[host]) return [names[host]]
    throw Object.assign(new Error(`unknown test name ${host}`), { code: 'ENOTFOUND' })
  })
}, 60_000)

afterAll(async () => {
  await h?.dispose()
  await server?.close()
})

const fetchCall = (id: string, url: string) => toolCall(id, 'web_fetch', { url })
const fetched = () => h.events('web/fetched').map((event) => event.data)

test('an allowed server answers: HTML as readable markdown, JSON and compressed text as they are, marked untrusted, logged and cached', async () => {
  const base = `http://api.test:${server.port}`
  h.root.scriptedLlm.enqueue(
    fetchCall('page', `${base}/page`),
    fetchCall('json', `${base}/data.json`),
    fetchCall('gzip', `${base}/gzip`),
    fetchCall('redirect', `${base}/to-page`),
    fetchCall('again', `${base}/page`),
    { text: 'done' },
  )
  const before = server.seen.length
  await h.run('read the pages')
  const page = h.toolText('page')
  expect(page).toContain(`[Untrusted content from ${base}/page (HTTP 200, text/html, `)
  expect(page).toContain('not instructions')
  expect(page).toContain('# The Test Page')
  expect(page).toContain(`[a relative link](${base}/more)`)
  expect(page).toContain('**bold words**')
  expect(page).toMatch(/-\s+one item/)
  expect(page).not.toContain('alert(')
  expect(page).not.toContain('<p>')
  expect(h.toolText('json')).toContain('{"a": [1, 2]}')
  expect(h.toolText('gzip')).toContain('\ncompressed text')
  expect(h.toolText('redirect')).toContain(`[Redirected: ${base}/to-page → ${base}/page]`)
  expect(h.toolText('again')).toContain("[From this session's cache: fetched ")
  expect(h.toolText('again')).toContain('# The Test Page')
  // The cached call reached no server: four fetches, one of them two hops.
  expect(server.seen.slice(before)).toEqual([
    `api.test:${server.port} /page`,
    `api.test:${server.port} /data.json`,
    `api.test:${server.port} /gzip`,
    `api.test:${server.port} /to-page`,
    `api.test:${server.port} /page`,
  ])
  expect(fetched().slice(-5)).toEqual([
    {
      url: `${base}/page`,
      outcome: 'fetched',
      status: 200,
      bytes: ARTICLE.length,
      contentType: 'text/html; charset=utf-8',
    },
    { url: `${base}/data.json`, outcome: 'fetched', status: 200, bytes: 13, contentType: 'application/json' },
    { url: `${base}/gzip`, outcome: 'fetched', status: 200, bytes: 15, contentType: 'text/plain' },
    {
      url: `${base}/to-page`,
      outcome: 'fetched',
      status: 200,
      bytes: ARTICLE.length,
      finalUrl: `${base}/page`,
      contentType: 'text/html; charset=utf-8',
    },
    { url: `${base}/page`, outcome: 'cached' },
  ])
  const decisions = h.events('network/decision').map((event) => `${event.data.host} ${event.data.decision}`)
  expect(decisions.slice(-5)).toEqual(Array(5).fill('api.test allowed'))
})

test('loopback, IPv6 loopback, IPv4-mapped IPv6, metadata, private addresses and names resolving to them are refused, and the server sees no connection', async () => {
  const port = server.port
  const targets = {
    v4: `http://127.0.0.1:${port}/page`,
    v6: `http://[::1]:${port}/page`,
    mapped: `http://[::ffff:127.0.0.1]:${port}/page`,
    decimal: `http://2130706433:${port}/page`,
    metadata: 'http://169.254.169.254/latest/meta-data/',
    private: `http://10.0.0.1:${port}/`,
    rebind: `http://rebind.example.org:${port}/page`,
    metaName: 'http://meta.example.org/latest/meta-data/',
    tls: `https://127.0.0.1:${port}/page`,
  }
  h.root.scriptedLlm.enqueue(...Object.entries(targets).map(([id, url]) => fetchCall(id, url)), { text: 'done' })
  const connections = server.connections()
  await h.run('try the internal addresses')
  for (const id of Object.keys(targets)) {
    expect(h.toolText(id), id).toMatch(/web_fetch .*: dsh: network not allowed: .* resolves to the private address/)
    expect(h.events('tool/result').find((event) => event.data.callId === id)!.data.error?.code).toBe('DENIED')
  }
  expect(h.toolText('mapped')).toContain('network not allowed: 127.0.0.1 resolves')
  expect(h.toolText('decimal')).toContain('network not allowed: 127.0.0.1 resolves')
  expect(h.toolText('metaName')).toContain('meta.example.org resolves to the private address 169.254.169.254')
  expect(server.connections()).toBe(connections)
  expect(
    fetched()
      .slice(-9)
      .map((entry) => entry.outcome),
  ).toEqual(Array(9).fill('refused'))
})

test('a redirect from an allowed host to loopback is refused at the second hop', async () => {
  h.root.scriptedLlm.enqueue(fetchCall('hop', `http://api.test:${server.port}/to-loopback`), { text: 'done' })
  const before = server.seen.length
  await h.run('follow it')
  expect(h.toolText('hop')).toContain(`dsh: network not allowed: 127.0.0.1 resolves to the private address 127.0.0.1`)
  expect(server.seen.slice(before)).toEqual([`api.test:${server.port} /to-loopback`])
  expect(
    h
      .events('network/decision')
      .slice(-2)
      .map((event) => [event.data.host, event.data.decision]),
  ).toEqual([
    ['api.test', 'allowed'],
    ['127.0.0.1', 'refused'],
  ])
})

test('an oversize answer and a slow one are cut with a clear note, a silent one fails naming the deadline, a redirect loop stops at maxRedirects; a bad URL is refused before any connection', async () => {
  const base = `http://api.test:${server.port}`
  h.root.scriptedLlm.enqueue(
    fetchCall('big', `${base}/big`),
    fetchCall('slow', `${base}/slow`),
    fetchCall('silent', `${base}/silent`),
    fetchCall('loop', `${base}/loop`),
    fetchCall('file', 'file:///etc/passwd'),
    fetchCall('userinfo', `http://user:secret@api.test:${server.port}/page`),
    { text: 'done' },
  )
  await h.run('fetch the big ones')
  const big = h.toolText('big')
  expect(big).toContain('[Cut: the answer is larger than 9.8 KB (maxBytes); only that much was read.]')
  expect(big).toContain('x'.repeat(10_000))
  expect(big).not.toContain('x'.repeat(10_001))
  const slow = h.toolText('slow')
  expect(slow).toContain('first part, ')
  expect(slow).toContain(
    '[Cut: the server was still sending after 2000 ms (timeoutMs); what arrived by then is shown.]',
  )
  expect(h.toolText('silent')).toContain(
    `web_fetch ${base}/silent: no answer from api.test:${server.port} within 2000 ms`,
  )
  expect(h.toolText('loop')).toContain(`more than 5 redirects (last: ${base}/loop → /loop)`)
  expect(h.toolText('file')).toContain('only http:// and https:// URLs can be fetched, not file:')
  expect(h.toolText('userinfo')).toContain('a URL with a user name or password is not fetched')
  expect(
    fetched()
      .slice(-4)
      .map((entry) => [entry.outcome, entry.cut]),
  ).toEqual([
    ['fetched', 'size'],
    ['fetched', 'time'],
    ['failed', undefined],
    ['failed', undefined],
  ])
})

test('https:// is TLS over the tunnel with the certificate checked: a self-signed server is refused before any request', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-tls-'))
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=api.test',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  )
  const requests: string[] = []
  let handshakes = 0
  const tls = createTlsServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (req, res) => (requests.push(req.url ?? ''), res.end('secret page')),
  )
  tls.on('connection', () => void handshakes++)
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
  const port = (tls.address() as { port: number }).port
  try {
    h.root.scriptedLlm.enqueue(fetchCall('self-signed', `https://api.test:${port}/`), { text: 'done' })
    await h.run('fetch over TLS')
    expect(h.toolText('self-signed')).toMatch(
      /web_fetch https:\/\/api\.test:\d+\/: cannot fetch .*self-signed certificate/,
    )
    expect(h.events('tool/result').at(-1)!.data.error?.code).toBe('TOOL_FAILED')
    expect(handshakes).toBe(1)
    expect(requests).toEqual([])
  } finally {
    tls.closeAllConnections()
    await new Promise<void>((resolve) => tls.close(() => resolve()))
    rmSync(dir, { recursive: true, force: true })
  }
})
