import { createSocket } from 'node:dgram'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import NetworkProxy from './index.ts'

/** A real HTTP server on the host's loopback that counts the connections it ever saw. */
async function countingServer(): Promise<{ port: number; connections: () => number }> {
  let connections = 0
  const server: Server = createServer((_req, res) => res.end('hello from the host\n'))
  server.on('connection', () => void connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.address() as { port: number }).port, connections: () => connections }
}

async function boot(script: ScriptedResponse[], options: { settings?: string; rows?: string } = {}): Promise<Harness> {
  const h = await bootComposition({
    patch: scriptedPatch({}, options.rows ?? ''),
    homeFiles: options.settings ? { 'settings.yaml': options.settings } : {},
  })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

/** Maps test names to the host's loopback for the proxy, as if a DNS server answered them. */
function mapNames(h: Harness, names: Record<string, string>) {
  ;(h.root.network as NetworkProxy).useResolver(h.root, async (host) => {
    if (names[host]) return [names[host]]
    throw Object.assign(new Error(`unknown test name ${host}`), { code: 'ENOTFOUND' })
  })
}

const bash = (id: string, command: string) => toolCall(id, 'bash', { command })
const decisions = (h: Harness) => h.events('network/decision').map((event) => event.data)

test('a confined command reaches no loopback service: through the proxy it is refused by name, directly it cannot connect', async () => {
  const server = await countingServer()
  const url = `http://127.0.0.1:${server.port}/`
  const python = `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${server.port}), 3)"`
  const node = `node -e "require('net').connect(${server.port}, '127.0.0.1').on('connect', () => console.log('connected')).on('error', (e) => { console.log(e.code); process.exit(1) })"`
  const h = await boot([
    bash('proxied', `curl -sS --max-time 10 ${url}`),
    bash('direct', `curl -sS --max-time 5 --noproxy '*' ${url}; echo "exit $?"`),
    bash('python', `${python}; echo "exit $?"`),
    bash('node', `${node}; echo "exit $?"`),
    { text: 'done' },
  ])
  await h.run('exfiltrate')
  expect(h.toolText('proxied')).toContain(
    `dsh: network not allowed: 127.0.0.1 (add it to network.allow in ${h.home}/settings.yaml)`,
  )
  expect(h.toolText('direct')).toMatch(/Failed to connect|Couldn't connect/)
  expect(h.toolText('python')).toMatch(/ConnectionRefusedError|OSError[\s\S]*exit 1/)
  expect(h.toolText('node')).toContain('ECONNREFUSED')
  expect(h.toolText('node')).not.toContain('connected\n')
  expect(server.connections()).toBe(0)
  expect(decisions(h)).toEqual([
    {
      host: '127.0.0.1',
      port: server.port,
      decision: 'refused',
      rule: 'not in network.allow, nobody can approve',
      address: '127.0.0.1',
    },
  ])
})

test('an allowed name reaches its server through the proxy (plain HTTP and CONNECT); another name is refused; every decision is logged', async () => {
  const server = await countingServer()
  const h = await boot(
    [
      bash(
        'allowed',
        `curl -sS --max-time 10 http://api.test:${server.port}/ && curl -sS --max-time 10 http://API.test.:${server.port}/again`,
      ),
      bash('tunnel', `curl -sS --max-time 10 --proxytunnel http://api.test:${server.port}/tunnel`),
      bash(
        'other',
        `curl -sS --max-time 10 http://other.test:${server.port}/; curl -sS --max-time 10 --proxytunnel http://other.test:${server.port}/`,
      ),
      bash('denied', `curl -sS --max-time 10 http://blocked.api.test:${server.port}/`),
      { text: 'done' },
    ],
    { settings: 'network.allow: [api.test, "*.api.test"]\nnetwork.deny: [blocked.api.test]\n' },
  )
  mapNames(h, { 'api.test': '127.0.0.1', 'other.test': '127.0.0.1', 'blocked.api.test': '127.0.0.1' })
  await h.run('fetch')
  expect(h.toolText('allowed')).toBe('hello from the host\nhello from the host')
  expect(h.toolText('tunnel')).toBe('hello from the host')
  expect(h.toolText('other')).toContain(
    `dsh: network not allowed: other.test (add it to network.allow in ${h.home}/settings.yaml)`,
  )
  expect(h.toolText('other')).toContain('CONNECT tunnel failed, response 403')
  expect(h.toolText('denied')).toContain(
    `dsh: network not allowed: blocked.api.test (refused by network.deny "blocked.api.test" in ${h.home}/settings.yaml)`,
  )
  expect(server.connections()).toBe(3)
  const allowed = {
    host: 'api.test',
    port: server.port,
    decision: 'allowed',
    rule: 'network.allow "api.test"',
    address: '127.0.0.1',
  }
  const refused = {
    host: 'other.test',
    port: server.port,
    decision: 'refused',
    rule: 'not in network.allow, nobody can approve',
    address: '127.0.0.1',
  }
  expect(decisions(h)).toEqual([
    allowed,
    allowed,
    allowed,
    refused,
    refused,
    { host: 'blocked.api.test', port: server.port, decision: 'refused', rule: 'network.deny "blocked.api.test"' },
  ])
})

test('a wildcard never admits a name that resolves to loopback (DNS rebinding), and the server sees nothing', async () => {
  const server = await countingServer()
  const h = await boot(
    [
      bash(
        'rebind',
        `curl -sS --max-time 10 http://evil.example.org:${server.port}/; curl -sS --max-time 10 http://127.0.0.1:${server.port}/`,
      ),
      { text: 'done' },
    ],
    {
      settings: 'network.allow: ["*"]\n',
    },
  )
  mapNames(h, { 'evil.example.org': '127.0.0.1' })
  await h.run('fetch')
  expect(h.toolText('rebind')).toContain(
    'dsh: network not allowed: evil.example.org resolves to the private address 127.0.0.1, which the wildcard "*" does not admit',
  )
  expect(h.toolText('rebind')).toContain(
    'dsh: network not allowed: 127.0.0.1 resolves to the private address 127.0.0.1',
  )
  expect(server.connections()).toBe(0)
  expect(decisions(h).map((decision) => [decision.host, decision.decision])).toEqual([
    ['evil.example.org', 'refused'],
    ['127.0.0.1', 'refused'],
  ])
})

test('DNS does not leak from the namespace: lookups fail and a UDP datagram to the host loopback never arrives', async () => {
  const udp = createSocket('udp4')
  const datagrams: Buffer[] = []
  udp.on('message', (message) => datagrams.push(message))
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve))
  onTestFinished(() => void udp.close())
  const port = udp.address().port
  const send = `python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', ('127.0.0.1', ${port}))"`
  const h = await boot([
    bash(
      'lookup',
      `getent hosts example.com; echo "getent $?"; python3 -c "import socket; socket.getaddrinfo('example.com', 443)" 2>&1 | tail -1`,
    ),
    bash('udp', `${send}; echo sent`),
    { text: 'done' },
  ])
  await h.run('resolve')
  expect(h.toolText('lookup')).toMatch(/getent 2\n/)
  expect(h.toolText('lookup')).toMatch(/socket\.gaierror/)
  await new Promise((resolve) => setTimeout(resolve, 200))
  expect(datagrams).toEqual([])
})

test('danger-full-access keeps the host network: the server on the loopback is reached directly', async () => {
  const server = await countingServer()
  const h = await boot([bash('free', `curl -sS --max-time 10 http://127.0.0.1:${server.port}/`), { text: 'done' }], {
    rows: '- id: permission-presets\n  config: { default: danger-full-access }\n',
  })
  await h.run('fetch')
  expect(h.toolText('free')).toBe('hello from the host')
  expect(server.connections()).toBe(1)
  expect(decisions(h)).toEqual([])
})

test('an unknown host is asked about: allowed once, it stays allowed for the session and a grant is logged', async () => {
  const server = await countingServer()
  const h = await boot([
    bash('first', `curl -sS --max-time 10 http://new.test:${server.port}/`),
    bash('again', `curl -sS --max-time 10 http://new.test:${server.port}/`),
    { text: 'done' },
  ])
  mapNames(h, { 'new.test': '127.0.0.1' })
  const asked: string[] = []
  h.root.approval.answerer(h.root, async (request) => (asked.push(`${request.tool}: ${request.summary}`), 'allow_once'))
  await h.run('fetch')
  expect(h.toolText('first')).toBe('hello from the host')
  expect(h.toolText('again')).toBe('hello from the host')
  expect(asked).toEqual([`network: connect to new.test:${server.port}`])
  expect(server.connections()).toBe(2)
  const requestId = h.events('approval/asked').find((event) => event.data.tool === 'network')!.data.requestId
  expect(h.events('network/grant').map((event) => event.data)).toEqual([{ host: 'new.test', requestId }])
  expect(decisions(h).map((decision) => [decision.decision, decision.rule])).toEqual([
    ['approved', 'approval'],
    ['allowed', 'session grant'],
  ])
})

test('an unknown host whose approval is rejected is refused, and the server sees nothing', async () => {
  const server = await countingServer()
  const h = await boot([bash('first', `curl -sS --max-time 10 http://new.test:${server.port}/`), { text: 'done' }])
  mapNames(h, { 'new.test': '127.0.0.1' })
  h.root.approval.answerer(h.root, async () => 'reject')
  await h.run('fetch')
  expect(h.toolText('first')).toContain(
    'dsh: network not allowed: new.test (the approval was refused; add it to network.allow in',
  )
  expect(server.connections()).toBe(0)
  expect(h.events('network/grant')).toEqual([])
  expect(decisions(h).map((decision) => [decision.decision, decision.rule])).toEqual([['refused', 'approval rejected']])
})

test('the persistent shell gets the same network: loopback refused by name, an allowed name reached', async () => {
  const server = await countingServer()
  const h = await boot(
    [
      bash(
        'refused',
        `curl -sS --max-time 10 http://127.0.0.1:${server.port}/; curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${server.port}/`,
      ),
      bash('allowed', `curl -sS --max-time 10 http://api.test:${server.port}/`),
      { text: 'done' },
    ],
    { settings: 'network.allow: [api.test]\n', rows: "- id: tool-bash\n  name: '@dsh/tool-bash-persistent'\n" },
  )
  mapNames(h, { 'api.test': '127.0.0.1' })
  await h.run('fetch')
  expect(h.toolText('refused')).toContain('dsh: network not allowed: 127.0.0.1 (add it to network.allow in')
  expect(h.toolText('refused')).toMatch(/Failed to connect|Couldn't connect/)
  expect(h.toolText('allowed')).toBe('hello from the host')
  expect(server.connections()).toBe(1)
})

test("a session's proxy starts on demand, is the same for every call, and closes with its agent", async () => {
  const h = await boot([])
  const agent = await h.agent()
  const socket = await h.root.network.endpoint(agent.session)
  expect(statSync(socket).isSocket()).toBe(true)
  expect((statSync(join(socket, '..')).mode & 0o777).toString(8)).toBe('700')
  expect(await h.root.network.endpoint(agent.session)).toBe(socket)
  await agent.dispose()
  expect(existsSync(socket)).toBe(false)
})

test('a grant is read from the log: a resumed session reaches the approved host with nobody to ask', async () => {
  const server = await countingServer()
  const home = tempDir('dsh-home-')
  const workspace = tempDir('dsh-ws-')
  const first = await bootComposition({ home, workspace, patch: scriptedPatch() })
  mapNames(first, { 'new.test': '127.0.0.1' })
  first.root.approval.answerer(first.root, async () => 'allow_once')
  first.root.scriptedLlm.enqueue(bash('asked', `curl -sS --max-time 10 http://new.test:${server.port}/`), {
    text: 'done',
  })
  await first.run('fetch')
  const id = (await first.agent()).session.id
  await first.dispose()

  const second = await bootComposition({ home, workspace, patch: scriptedPatch() })
  onTestFinished(() => second.dispose())
  mapNames(second, { 'new.test': '127.0.0.1' })
  const resumed = await second.root.agents.resume(id)
  second.root.scriptedLlm.enqueue(bash('again', `curl -sS --max-time 10 http://new.test:${server.port}/`), {
    text: 'done',
  })
  resumed.followup('fetch again')
  await resumed.whenIdle()
  expect(server.connections()).toBe(2)
  expect(resumed.session.all('network/decision').map((event) => [event.data.decision, event.data.rule])).toEqual([
    ['approved', 'approval'],
    ['allowed', 'session grant'],
  ])
})

test('"always in this workspace" keeps network(<host>) in grants.yaml: a new session there reaches it with nobody to ask, another workspace does not', async () => {
  const server = await countingServer()
  const home = tempDir('dsh-home-')
  const workspace = tempDir('dsh-ws-')
  const first = await bootComposition({ home, workspace, patch: scriptedPatch() })
  mapNames(first, { 'new.test': '127.0.0.1' })
  const offered: (string | undefined)[] = []
  first.root.approval.answerer(first.root, async (request) => (offered.push(request.rule), 'allow_always'), {
    actor: 'user:web-tab',
  })
  first.root.scriptedLlm.enqueue(bash('asked', `curl -sS --max-time 10 http://new.test:${server.port}/`), {
    text: 'done',
  })
  await first.run('fetch')
  expect(offered).toEqual(['network(new.test)'])
  expect(readFileSync(join(home, 'grants.yaml'), 'utf8')).toContain('network(new.test)')
  await first.dispose()

  const second = await bootComposition({ home, workspace, patch: scriptedPatch() })
  onTestFinished(() => second.dispose())
  mapNames(second, { 'new.test': '127.0.0.1' })
  second.root.scriptedLlm.enqueue(bash('again', `curl -sS --max-time 10 http://new.test:${server.port}/`), {
    text: 'done',
  })
  await second.run('fetch in a new session')
  expect(second.toolText('again')).toBe('hello from the host')
  expect(second.events('approval/decided').map((event) => event.data.by)).toEqual(['grant'])

  const elsewhere = await bootComposition({ home, patch: scriptedPatch() })
  onTestFinished(() => elsewhere.dispose())
  mapNames(elsewhere, { 'new.test': '127.0.0.1' })
  elsewhere.root.scriptedLlm.enqueue(bash('other', `curl -sS --max-time 10 http://new.test:${server.port}/`), {
    text: 'done',
  })
  await elsewhere.run('fetch from another workspace')
  expect(elsewhere.toolText('other')).toContain('network not allowed: new.test')
  expect(server.connections()).toBe(2)
})

test('a network decision or grant not of its schema is refused, naming the field, and grants nothing', async () => {
  const h = await boot([])
  const session = (await h.agent()).session
  expect(() =>
    session.append('network/decision', { host: 'a.example', port: 443, decision: 'maybe' as never, rule: 'x' }),
  ).toThrow('data.decision must be one of allowed, refused, approved')
  expect(() =>
    session.append('network/decision', { host: 'a.example', port: 44.3, decision: 'allowed', rule: 'x' }),
  ).toThrow('data.port must be a whole number')
  expect(() => session.append('network/grant', { host: '', requestId: 'r1' })).toThrow(
    'data.host must be a non-empty string',
  )
  expect(session.events.filter((event) => event.type.startsWith('network/'))).toEqual([])
})
