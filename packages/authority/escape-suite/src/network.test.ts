import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type {} from '@dsh/network'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import type NetworkProxy from '@dsh/network-proxy'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'

// The network, end to end: the model is a real HTTP endpoint on the host's loopback (the mock server, which
// the composition's DeepSeek adapter really talks to), and a second server stands for an outside address,
// reachable only by a name the user allows. A confined command must reach neither, by any client, until the
// user allows the outside name; then it reaches that one server only, through dsh's proxy, and every
// decision is a `network/decision` event.

/** A real HTTP server on the host's loopback that counts every connection it ever accepted. */
async function outsideServer(): Promise<{ port: number; connections: () => number }> {
  let connections = 0
  const server = createServer((_req, res) => res.end('hello from outside\n'))
  server.on('connection', () => void connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.address() as { port: number }).port, connections: () => connections }
}

/** Boots the default composition with its model route pointed at the mock server, in `home`. */
async function bootAgainst(llm: MockServer, home: string, commands: Record<string, string>): Promise<Harness> {
  const patch = `
- id: agents
  config: { route: { provider: deepseek, model: deepseek-v4-flash } }
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-retry
  config: { maxRetries: 0 }
`
  const h = await bootComposition({ patch, home, workspace: tempDir('dsh-ws-') })
  onTestFinished(() => h.dispose())
  await h.root.credentials.set('DEEPSEEK_API_KEY', 'sk-escape-suite-network-0123456789')
  // The test names resolve to the host's loopback, as if a DNS server answered them (the proxy's lookup only).
  ;(h.root.network as NetworkProxy).useResolver(h.root, async (host) => {
    if (host === 'outside.test' || host === 'other.test') return ['127.0.0.1']
    throw Object.assign(new Error(`unknown test name ${host}`), { code: 'ENOTFOUND' })
  })
  llm.enqueue(
    ...Object.entries(commands).map(([id, command]) => ({ toolCalls: [{ id, name: 'bash', arguments: { command } }] })),
    { text: 'done' },
  )
  return h
}

/** The mock server saw the model's own requests and nothing else: no probe from the sandbox arrived. */
function expectOnlyModelRequests(llm: MockServer, modelCalls: number) {
  expect(llm.requests.map((request) => `${request.method} ${request.path}`)).toEqual(
    Array(modelCalls).fill('POST /chat/completions'),
  )
}

const decisions = (h: Harness) =>
  h.events('network/decision').map((event) => [event.data.host, event.data.port, event.data.decision])

test('a confined command reaches neither the model endpoint nor an outside server by any client; once allowed, only the allowed name gets through', async () => {
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const outside = await outsideServer()
  const modelPort = Number(new URL(llm.url).port)
  const home = tempDir('dsh-home-')
  const request = (path: string) => `GET /${path} HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n`
  // `{ …; } 2>&1`: one pipe for both streams, so what a command prints and the `exit` lines keep their order
  // (separate stdout and stderr pipes reach the tool in whatever order the kernel delivers them).
  const attacks = {
    proxied: `curl -sS --max-time 10 http://127.0.0.1:${modelPort}/from-sandbox-curl`,
    around: `{ curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${modelPort}/from-sandbox-noproxy; echo "exit $?"; } 2>&1`,
    devtcp: `{ (exec 3<>/dev/tcp/127.0.0.1/${modelPort} && printf '${request('from-sandbox-devtcp')}' >&3 && cat <&3); echo "exit $?"; } 2>&1`,
    python: `{ python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${modelPort}), 3); s.sendall(b'${request('from-sandbox-python')}'); print(s.recv(100))"; echo "exit $?"; } 2>&1`,
    node: `{ node -e "require('net').connect(${modelPort}, '127.0.0.1').on('connect', function () { this.write('${request('from-sandbox-node')}'); console.log('connected') }).on('error', (e) => { console.log(e.code); process.exit(1) })"; echo "exit $?"; } 2>&1`,
    named: `curl -sS --max-time 10 http://outside.test:${outside.port}/; curl -sS --max-time 10 --proxytunnel http://outside.test:${outside.port}/`,
    direct: `{ curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${outside.port}/; echo "exit $?"; (exec 3<>/dev/tcp/127.0.0.1/${outside.port}); echo "exit $?"; } 2>&1`,
    dns: `getent hosts outside.test example.com; echo "getent $?"; python3 -c "import socket; socket.getaddrinfo('example.com', 443)" 2>&1 | tail -1`,
  }
  const h = await bootAgainst(llm, home, attacks)
  expect((await h.run('reach the network')).reason).toBe('completed')

  expect(h.toolText('proxied')).toContain(
    `dsh: network not allowed: 127.0.0.1 (add it to network.allow in ${home}/settings.yaml)`,
  )
  expect(h.toolText('around')).toMatch(/(Failed to connect|Couldn't connect)[\s\S]*exit 7/)
  expect(h.toolText('devtcp')).toMatch(/Connection refused[\s\S]*exit 1/)
  expect(h.toolText('python')).toMatch(/ConnectionRefusedError[\s\S]*exit 1/)
  expect(h.toolText('node')).toMatch(/ECONNREFUSED\nexit 1/)
  expect(h.toolText('named')).toContain(
    `dsh: network not allowed: outside.test (add it to network.allow in ${home}/settings.yaml)`,
  )
  expect(h.toolText('named')).toContain('CONNECT tunnel failed, response 403')
  expect(h.toolText('direct')).toMatch(/exit 7[\s\S]*Connection refused[\s\S]*exit 1/)
  expect(h.toolText('dns')).toMatch(/getent 2\n/)
  expect(h.toolText('dns')).toMatch(/socket\.gaierror/)
  expectOnlyModelRequests(llm, Object.keys(attacks).length + 1)
  expect(outside.connections()).toBe(0)
  expect(decisions(h)).toEqual([
    ['127.0.0.1', modelPort, 'refused'],
    ['outside.test', outside.port, 'refused'],
    ['outside.test', outside.port, 'refused'],
  ])
  await h.dispose()

  // The user allows the outside name (settings are read at start), and dsh starts again on the same home.
  writeFileSync(join(home, 'settings.yaml'), 'network.allow: [outside.test]\n')
  llm.reset()
  const after = await bootAgainst(llm, home, {
    allowed: `curl -sS --max-time 10 http://outside.test:${outside.port}/ && curl -sS --max-time 10 --proxytunnel http://outside.test:${outside.port}/`,
    model: `curl -sS --max-time 10 http://127.0.0.1:${modelPort}/from-sandbox-after`,
    other: `curl -sS --max-time 10 http://other.test:${outside.port}/; curl -sS --max-time 10 http://127.0.0.1:${outside.port}/`,
    around: `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${outside.port}/; echo "exit $?"`,
  })
  expect((await after.run('reach it again')).reason).toBe('completed')
  expect(after.toolText('allowed')).toBe('hello from outside\nhello from outside')
  expect(after.toolText('model')).toContain('dsh: network not allowed: 127.0.0.1')
  expect(after.toolText('other')).toContain('dsh: network not allowed: other.test')
  expect(after.toolText('other')).toContain('dsh: network not allowed: 127.0.0.1')
  expect(after.toolText('around')).toMatch(/exit 7/)
  expect(outside.connections()).toBe(2)
  expectOnlyModelRequests(llm, 5)
  expect(after.events('network/decision').map((event) => event.data)).toEqual([
    {
      host: 'outside.test',
      port: outside.port,
      decision: 'allowed',
      rule: 'network.allow "outside.test"',
      address: '127.0.0.1',
    },
    {
      host: 'outside.test',
      port: outside.port,
      decision: 'allowed',
      rule: 'network.allow "outside.test"',
      address: '127.0.0.1',
    },
    {
      host: '127.0.0.1',
      port: modelPort,
      decision: 'refused',
      rule: 'not in network.allow, nobody can approve',
      address: '127.0.0.1',
    },
    {
      host: 'other.test',
      port: outside.port,
      decision: 'refused',
      rule: 'not in network.allow, nobody can approve',
      address: '127.0.0.1',
    },
    {
      host: '127.0.0.1',
      port: outside.port,
      decision: 'refused',
      rule: 'not in network.allow, nobody can approve',
      address: '127.0.0.1',
    },
  ])
}, 120_000) // a dozen confined commands and two boots: generous on a loaded 2-core machine
