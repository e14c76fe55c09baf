import { readdirSync, readFileSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import type { Socket } from 'node:net'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/permission-presets'
import type {} from '@dsh/webserver'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

// The web host is the most valuable target on the machine: one API call with its token switches a session
// to danger-full-access. A confined command in one of its sessions must not reach it (not through dsh's proxy,
// not around it), must not find its token (environment, process list, DSH_HOME), and the session's authority
// must stay what it was.

/** The real web profile in this process, its host listening on a free loopback port, every connection's peer port recorded. */
async function bootWeb(): Promise<{ h: Harness; peers: number[] }> {
  const h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    patch: scriptedPatch({}, '- id: webserver\n  config: { announce: false, open: false }\n'),
  })
  onTestFinished(() => h.dispose())
  await h.root.webserver.start()
  const peers: number[] = []
  // The host's own server (private: no API exposes it) is where "saw no connection" is observed.
  const server = (
    h.root.webserver as unknown as {
      running: { server: { on(event: 'connection', listener: (socket: Socket) => void): void } }
    }
  ).running.server
  server.on('connection', (socket) => peers.push(socket.remotePort!))
  return { h, peers }
}

/** Every regular file under `dir`, read as text (what a command that can read the tree could find). */
const filesUnder = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path, { throwIfNoEntry: false })?.isFile())
    .map((path) => readFileSync(path, 'utf8'))

/** `POST /api/<method>` signed in with `cookie`, from a fresh connection whose local port is added to `mine`. */
function call<T = any>(h: Harness, mine: Set<number>, cookie: string, method: string, params: unknown): Promise<T> {
  const body = JSON.stringify(params)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${h.root.webserver.url}/api/${method}`,
      { method: 'POST', agent: false, headers: { 'Content-Type': 'application/json', Cookie: cookie } },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk) => (text += chunk))
        res.on('end', () => {
          const answer = JSON.parse(text) as { ok: boolean; result?: T; error?: { code: string; message: string } }
          if (answer.ok) resolve(answer.result as T)
          else reject(new Error(`${method}: ${answer.error?.code} ${answer.error?.message}`))
        })
      },
    )
    req.on('socket', (socket) => socket.on('connect', () => mine.add(socket.localPort!)))
    req.on('error', reject)
    req.end(body)
  })
}

/** Opens the printed sign-in link as a browser would (Basic credentials from the link), from a connection added to `mine`. */
function signIn(link: string, mine: Set<number>): Promise<string> {
  const url = new URL(link)
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString(
    'base64',
  )
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url.origin}${url.pathname}`,
      { agent: false, headers: { Authorization: `Basic ${basic}` } },
      (res) => {
        res.resume()
        const cookie = res.headers['set-cookie']?.[0]?.split(';')[0]
        if (res.statusCode === 303 && cookie) resolve(cookie)
        else reject(new Error(`sign-in refused (${res.statusCode})`))
      },
    )
    req.on('socket', (socket) => socket.on('connect', () => mine.add(socket.localPort!)))
    req.on('error', reject)
    req.end()
  })
}

test('a confined command in a web session cannot reach the web host or find its token, and the session stays workspace-write', async () => {
  const { h, peers } = await bootWeb()
  const mine = new Set<number>()
  const { port } = h.root.webserver
  // The test is the user's browser: it signs in with the printed link; the cookie's value is the secret.
  const cookie = await signIn(h.root.webserver.newLink(), mine)
  const token = cookie.slice(cookie.indexOf('=') + 1)
  const { sessionId } = await call<{ sessionId: string }>(h, mine, cookie, 'sessions.create', { cwd: h.workspace })
  const escalate = JSON.stringify({ sessionId, preset: 'danger-full-access' })
  const post = (flags: string, auth: string) =>
    `curl -sS --max-time 10 ${flags} -X POST -H 'Content-Type: application/json' -H "Cookie: dsh_web_${port}=${auth}" -d '${escalate}' http://127.0.0.1:${port}/api/agent.setPreset; echo " exit $?"`
  const hunt = `{ env; tr '\\0' '\\n' < /proc/1/cmdline; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; done; grep -rahoE 'token[^ ]{0,80}' ${h.home} ${h.workspace} 2>/dev/null; } | grep -ioE 'token[=: "]+[A-Za-z0-9_-]{20,}' | head -1 | sed -E 's/.*[=: "]//'`
  h.root.scriptedLlm.enqueue(
    toolCall('hunt', 'bash', { command: `t=$(${hunt}); echo "found [$t]"` }),
    toolCall('dump', 'bash', {
      command: `env; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done; grep -rah token ${h.home} 2>/dev/null | head -50`,
    }),
    toolCall('proxied', 'bash', { command: post('--max-time 3', 'guess') }),
    toolCall('around', 'bash', { command: post("--noproxy '*'", `$(${hunt})`) }),
    toolCall('devtcp', 'bash', {
      command: `(exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'POST /api/agent.setPreset HTTP/1.0\\r\\nContent-Type: application/json\\r\\nContent-Length: ${escalate.length}\\r\\n\\r\\n%s' '${escalate}' >&3 && cat <&3); echo "exit $?"`,
    }),
    toolCall('python', 'bash', {
      command: `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 3)" 2>&1 | tail -1`,
    }),
    { text: 'done' },
  )
  await call(h, mine, cookie, 'agent.send', { sessionId, text: 'make yourself at home' })
  const session = h.root.sessions.get(sessionId)!
  await expect
    .poll(() => session.events.some((event) => event.type === 'turn/end'), { timeout: 30_000, interval: 50 })
    .toBe(true)
  const agent = session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => JSON.stringify(event.data))
    .join('\n')

  expect(agent).toContain('found []')
  expect(agent).toMatch(/"callId":"dump".*PATH=/)
  // Through the proxy, the web profile can ask a person (the browser answers approvals): the loopback port is
  // asked about, never admitted by a rule, and nobody answering means no connection was made.
  expect(agent).toMatch(/"callId":"proxied".*exit 28/)
  expect(
    session.events
      .filter((event) => event.type === 'approval/asked')
      .map((event) => [(event.data as any).tool, (event.data as any).summary]),
  ).toEqual([['network', `connect to 127.0.0.1:${port}`]])
  expect(
    session.events.filter((event) => event.type === 'network/decision' && (event.data as any).decision !== 'refused'),
  ).toEqual([])
  expect(agent).toMatch(/(Failed to connect|Couldn't connect)[^"]* exit 7/)
  expect(agent).toMatch(/Connection refused[\s\S]*exit 1/)
  expect(agent).toContain('ConnectionRefusedError')
  expect(agent).not.toContain(token)
  await session.flush()
  const onDisk = [...filesUnder(h.home), ...filesUnder(h.workspace)]
  expect(onDisk.some((text) => text.includes('tool/result'))).toBe(true) // the session log is among them
  for (const text of onDisk) expect(text).not.toContain(token) // nowhere on disk to find
  expect(session.events.filter((event) => event.type === 'sandbox/mode' || event.type === 'permission/preset')).toEqual(
    [],
  )
  expect(h.root.permissionPresets.current(session).preset).toBe('workspace-write')
  expect(peers.filter((peer) => !mine.has(peer))).toEqual([]) // every connection the host saw was the test's own
  expect(peers.length).toBe(mine.size)
})
