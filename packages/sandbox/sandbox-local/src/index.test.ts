import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { beforeEach, expect, onTestFinished, test } from 'vitest'
import { Context } from '@dsh/cordis'
import type { Sandbox, SandboxAuthority } from '@dsh/sandbox'
import { outsideDir, tempDir } from '@dsh/test-harness/world'
import SandboxLocal, { type Config } from './index.ts'

let workspace: string
beforeEach(() => {
  workspace = tempDir('dsh-ws-')
})

async function mount(config: Partial<Config> = {}): Promise<Sandbox> {
  const root = new Context()
  const fiber = root.plugin(SandboxLocal, SandboxLocal.Config(config))
  await fiber
  onTestFinished(() => fiber.dispose())
  return root.get('sandbox')!
}

/** Runs argv for real and reports how it ended. */
function execute(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

async function runConfined(sandbox: Sandbox, script: string, authority: SandboxAuthority) {
  const confined = await sandbox.confine(['bash', '-c', script], { cwd: workspace, authority })
  return { ...(await execute(confined.argv, workspace)), confined }
}

const workspaceWrite = (): SandboxAuthority => ({ mode: 'workspace-write', writableRoots: [workspace] })

test('the probe runs bubblewrap and reports it available with its path', async () => {
  const sandbox = await mount()
  expect(await sandbox.probe()).toMatchObject({
    backend: 'bubblewrap',
    available: true,
    executable: expect.stringMatching(/\/bwrap$/),
  })
})

test('in workspace-write a write inside the workspace succeeds', async () => {
  const sandbox = await mount()
  const result = await runConfined(sandbox, 'echo inside > note.txt', workspaceWrite())
  expect(result.code).toBe(0)
  expect(result.confined.enforcement).toBe('full')
  expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('inside\n')
})

test('in workspace-write a write to a directory outside the workspace fails and the file is absent', async () => {
  const sandbox = await mount()
  const outside = outsideDir()
  const result = await runConfined(sandbox, `echo pwned > ${outside}/x`, workspaceWrite())
  expect(result.code).not.toBe(0)
  expect(result.output).toContain('Read-only file system')
  expect(existsSync(join(outside, 'x'))).toBe(false)
})

test('in workspace-write a write to $HOME fails and the file is absent', async () => {
  const sandbox = await mount()
  const file = join(homedir(), `.dsh-sandbox-test-${process.pid}-${Date.now()}`)
  onTestFinished(() => rmSync(file, { force: true }))
  const result = await runConfined(
    sandbox,
    `echo pwned > "$HOME/${file.slice(homedir().length + 1)}"`,
    workspaceWrite(),
  )
  expect(result.code).not.toBe(0)
  expect(existsSync(file)).toBe(false)
})

test('a write to /tmp lands in a private /tmp and is absent on the host', async () => {
  const sandbox = await mount()
  const name = `dsh-private-tmp-${process.pid}-${Date.now()}`
  onTestFinished(() => rmSync(join('/tmp', name), { force: true }))
  const result = await runConfined(sandbox, `echo scratch > /tmp/${name} && cat /tmp/${name}`, workspaceWrite())
  expect(result).toMatchObject({ code: 0, output: 'scratch\n' })
  expect(existsSync(join('/tmp', name))).toBe(false)
})

test('read-only refuses every write, the workspace included, and the file is absent', async () => {
  const sandbox = await mount()
  const result = await runConfined(sandbox, 'echo nope > note.txt', { mode: 'read-only', writableRoots: [workspace] })
  expect(result.code).not.toBe(0)
  expect(result.confined.enforcement).toBe('full')
  expect(existsSync(join(workspace, 'note.txt'))).toBe(false)
})

test('read-only can still read the workspace', async () => {
  const sandbox = await mount()
  await execute(['bash', '-c', 'echo hello > seen.txt'], workspace)
  const result = await runConfined(sandbox, 'cat seen.txt', { mode: 'read-only', writableRoots: [] })
  expect(result).toMatchObject({ code: 0, output: 'hello\n' })
})

test('danger-full-access runs unconfined and a write outside the workspace succeeds', async () => {
  const sandbox = await mount()
  const outside = outsideDir()
  const result = await runConfined(sandbox, `echo allowed > ${outside}/x`, {
    mode: 'danger-full-access',
    writableRoots: [workspace],
  })
  expect(result.confined).toMatchObject({
    enforcement: 'none',
    backend: 'none',
    argv: ['bash', '-c', `echo allowed > ${outside}/x`],
  })
  expect(readFileSync(join(outside, 'x'), 'utf8')).toBe('allowed\n')
})

test('without bwrap on PATH a confined mode is refused with a message naming bubblewrap', async () => {
  const path = process.env.PATH
  onTestFinished(() => void (process.env.PATH = path))
  process.env.PATH = tempDir('dsh-empty-path-') // removed by its own path, not by whatever PATH holds then
  const sandbox = await mount()
  expect(await sandbox.probe()).toMatchObject({
    backend: 'bubblewrap',
    available: false,
    reason: 'bubblewrap (bwrap) not found on PATH',
  })
  for (const mode of ['read-only', 'workspace-write'] as const) {
    await expect(
      sandbox.confine(['true'], { cwd: workspace, authority: { mode, writableRoots: [workspace] } }),
    ).rejects.toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
      message: `cannot confine a command in ${mode} mode: bubblewrap (bwrap) not found on PATH`,
    })
  }
})

test('a writable root that does not exist is refused', async () => {
  const sandbox = await mount()
  const missing = join(workspace, 'missing')
  await expect(
    sandbox.confine(['true'], { cwd: workspace, authority: { mode: 'workspace-write', writableRoots: [missing] } }),
  ).rejects.toMatchObject({
    code: 'SANDBOX_INVALID_AUTHORITY',
    message: expect.stringContaining(missing),
  })
})

/** A TCP server on the host's loopback that counts the connections it saw. */
async function countingServer(): Promise<{ port: number; connections: () => number }> {
  let connections = 0
  const server = createServer((socket) => (connections++, socket.end()))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => void server.close())
  return { port: (server.address() as { port: number }).port, connections: () => connections }
}

const connectTo = (port: number) => `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`

test('a confined command has no network by default: a server on the host loopback sees no connection', async () => {
  const server = await countingServer()
  const sandbox = await mount()
  const authorities: SandboxAuthority[] = [
    workspaceWrite(),
    { ...workspaceWrite(), network: { kind: 'none' } },
    { mode: 'read-only', writableRoots: [] },
  ]
  for (const authority of authorities) {
    const closed = await runConfined(sandbox, connectTo(server.port), authority)
    expect(closed.code).not.toBe(0)
    expect(closed.output).not.toContain('connected')
  }
  expect(server.connections()).toBe(0)
})

test('a confined authority with the host network reaches the host loopback', async () => {
  const server = await countingServer()
  const open = await runConfined(await mount(), connectTo(server.port), {
    ...workspaceWrite(),
    network: { kind: 'host' },
  })
  expect(open).toMatchObject({ code: 0, output: 'connected\n' })
  expect(server.connections()).toBe(1)
})

test.each([
  ['perl', {}],
  ['node (no perl in the sandbox)', { perl: '/nonexistent/perl' }],
])(
  'with a proxy socket the command reaches only the socket, through the %s bridge the proxy variables name',
  async (_bridge, config) => {
    const directory = tempDir('dsh-proxy-sock-')
    const socket = join(directory, 'proxy.sock')
    const received: string[] = []
    const proxy = createServer((client) =>
      client.once(
        'data',
        (chunk) => (
          received.push(chunk.toString()),
          client.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nproxy\n')
        ),
      ),
    )
    await new Promise<void>((resolve) => proxy.listen(socket, resolve))
    onTestFinished(() => void proxy.close())
    const host = await countingServer()
    const script = `echo "$HTTP_PROXY $HTTPS_PROXY $http_proxy $https_proxy $ALL_PROXY [\${NO_PROXY-unset}]"; curl -sS --max-time 10 http://example.test/path; ${connectTo(host.port)}`
    const confined = await (
      await mount({ proxyPort: 3999, ...config })
    ).confine(['bash', '-c', script], {
      cwd: workspace,
      authority: { ...workspaceWrite(), network: { kind: 'proxy', socket } },
    })
    const result = await execute(confined.argv, workspace, { ...process.env, NO_PROXY: 'example.test' })
    const url = 'http://127.0.0.1:3999'
    expect(result.output).toContain(`${url} ${url} ${url} ${url} ${url} [unset]\nproxy\n`)
    expect(result.output).not.toContain('connected')
    expect(received[0]).toMatch(/^GET http:\/\/example\.test\/path HTTP\/1\.1\r\n/)
    expect(host.connections()).toBe(0)
  },
)

test('a proxy network whose socket does not exist is refused before anything runs', async () => {
  const missing = join(workspace, 'no.sock')
  await expect(
    (await mount()).confine(['true'], {
      cwd: workspace,
      authority: { ...workspaceWrite(), network: { kind: 'proxy', socket: missing } },
    }),
  ).rejects.toMatchObject({
    code: 'SANDBOX_INVALID_AUTHORITY',
    message: `network proxy socket "${missing}" is not an existing Unix socket`,
  })
})

test('a readable root under /tmp is readable through the private /tmp, and still not writable', async () => {
  const sandbox = await mount()
  const tools = tempDir('dsh-readable-')
  writeFileSync(join(tools, 'server.txt'), 'served\n')
  const hidden = await runConfined(sandbox, `cat ${join(tools, 'server.txt')}`, {
    mode: 'workspace-write',
    writableRoots: [workspace],
  })
  expect(hidden.code).not.toBe(0)
  const authority: SandboxAuthority = {
    mode: 'workspace-write',
    writableRoots: [workspace],
    readableRoots: [tools, join(tools, 'missing')],
  }
  const shown = await runConfined(
    sandbox,
    `cat ${join(tools, 'server.txt')} && echo changed > ${join(tools, 'server.txt')}`,
    authority,
  )
  expect(shown.output).toContain('served')
  expect(shown.code).not.toBe(0)
  expect(readFileSync(join(tools, 'server.txt'), 'utf8')).toBe('served\n')
})

// Without a network bridge nothing inside closes descriptors: the launcher outside bubblewrap must. The argv is
// started the way a terminal or an IDE would start dsh, with an extra open socket (fd 9, its other end here);
// the command lists its descriptors (in a child: a glob in the shell would add its own) and writes to each.
test('a descriptor the starter inherited does not reach a confined command without a network', async () => {
  const sandbox = await mount()
  const { argv } = await sandbox.confine(
    [
      'bash',
      '-c',
      'ls /proc/$$/fd > /tmp/fds; tr "\\n" " " < /tmp/fds; for n in $(cat /tmp/fds); do [ "$n" -gt 2 ] && { echo "pwned through $n" >&$n; } 2>/dev/null; done; true',
    ],
    { cwd: workspace, authority: { ...workspaceWrite(), network: { kind: 'none' } } },
  )
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'pipe', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'pipe'],
  })
  let output = ''
  let inherited = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  ;(child.stdio as unknown as Readable[])[9]!.on('data', (chunk) => (inherited += chunk))
  const code = await new Promise((resolve) => child.on('close', resolve))
  expect(code).toBe(0)
  expect(output.trim().split(' ')).toEqual(['0', '1', '2'])
  expect(inherited).toBe('')
})
