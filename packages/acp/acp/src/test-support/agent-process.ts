// Runs the real `dsh acp` (the launcher's `run()` with the `acp` profile) in a temp home and workspace with the ACP
// SDK's own client on its stdio: in the test's own process over a stream pair (@dsh/test-harness `launchInProcess`;
// the agent reads the launch's streams, `ctx.app.stdio`), or, with `process: true`, spawned (`bin/dsh.js`) for tests
// whose subject is the process: its exit, an environment unlike its neighbours', its real stdout. Only the model is
// fake (the mock model server of the test process). docs/architecture.md, "Tests".
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { PassThrough, Readable, Writable } from 'node:stream'
import {
  client,
  ndJsonStream,
  type ClientCapabilities,
  type ClientConnection,
  type ClientContext,
  type InitializeResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
} from '@agentclientprotocol/sdk'
import { launchInProcess } from '@dsh/test-harness'

const require = createRequire(import.meta.url)
/** The launcher as users run it (from `dist`: the tests need a build first). */
export const DSH_BIN = join(dirname(require.resolve('@dsh/cli/package.json')), 'bin', 'dsh.js')
/** The folder of a workspace package (found from its entry, whichever condition resolved it). */
function packageRoot(name: string): string {
  let dir = dirname(require.resolve(name))
  while (
    !existsSync(join(dir, 'package.json')) ||
    JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name
  ) {
    if (dirname(dir) === dir) throw new Error(`cannot find the folder of ${name}`)
    dir = dirname(dir)
  }
  return dir
}

/** A built module of a package (`dist/…`), for the absolute-path rows of a patch: the process runs plain node. */
export const builtModule = (name: string, file = 'dist/index.js') => join(packageRoot(name), file)

export interface AgentProcessOptions {
  /** Patch YAML passed with `--patch` (the model and test tools). */
  patch: string
  /** Extra environment of the agent process (e.g. the mock model's base URL and key). */
  env?: Record<string, string>
  /** Reuse a home (to restart on the same sessions); kept on stop. */
  home?: string
  workspace?: string
  workspaceFiles?: Record<string, string>
  /** What the client advertises in `initialize`. */
  capabilities?: ClientCapabilities
  /** How the "user" answers permission requests (default: the request is left for the test to answer). */
  permission?: (request: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>
  /** The editor's open buffers, by absolute path: served to `fs/read_text_file` before the disk. */
  buffers?: Map<string, string>
  /** Asked at each `terminal/create`: a message makes the editor refuse it with that error (as a real client would). */
  refuseTerminal?: () => string | undefined
}

/** A command the test editor runs in one of its terminals (a real child process, in its own group). */
interface EditorTerminal {
  child: ChildProcess
  output: string
  truncated: boolean
  limit: number | undefined
  exit: Promise<{ exitCode: number | null; signal: string | null }>
  exitStatus?: { exitCode: number | null; signal: string | null }
}

/** A real `dsh acp` (in this process, or spawned) with the ACP SDK's own client connected to its stdio. */
export interface AgentProcess {
  home: string
  workspace: string
  /** The spawned process (`process: true` only). */
  child?: ChildProcess
  connection: ClientConnection
  agent: ClientContext
  /** Every `session/update` received, in order. */
  notifications: SessionNotification[]
  permissionRequests: RequestPermissionRequest[]
  fsReads: { path: string; line?: number | null; limit?: number | null }[]
  fsWrites: { path: string; content: string }[]
  buffers: Map<string, string>
  /** Terminals the agent asked the editor for, and what was done to them. */
  terminals: { command: string; args: string[]; cwd?: string | null; killed: boolean; released: boolean }[]
  stderr(): string
  updates(sessionId: string): SessionUpdate[]
  /** Resolves with the first update (from now on or already received) matching `test`. */
  waitForUpdate(sessionId: string, test: (update: SessionUpdate) => boolean, timeoutMs?: number): Promise<SessionUpdate>
  /** Closes stdin (the editor goes away) and resolves with the exit code. */
  stop(): Promise<number | null>
  /** Stops and removes the temp folders it made. */
  dispose(): Promise<void>
}

function writeTree(root: string, files: Record<string, string> = {}) {
  for (const [relative, text] of Object.entries(files)) {
    const file = join(root, relative)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
}

/** A `dsh acp` in temp folders (or given ones), before anyone speaks to it. */
export interface SpawnedAgent {
  home: string
  workspace: string
  /** The spawned process (`process: true` only). */
  child?: ChildProcess
  /** The agent's standard input and output: the editor's side of the connection. */
  input: Writable
  output: Readable
  exited: Promise<number | null>
  stderr(): string
  /** Ends the agent (stdin first; a process gets SIGKILL after a grace) and removes the temp folders it made. */
  cleanup(): Promise<void>
}

export interface StartOptions {
  /** Extra arguments after `dsh acp --patch <file>`. */
  args?: string[]
  /** Spawn `dsh acp` as a process (its exit, its environment, its real stdout are the subject); in-process otherwise. */
  process?: boolean
}

/**
 * The `HOME` of every in-process agent of this worker. In-process launches side by side share one environment
 * (`launchInProcess`), and `HOME` is read by plugins, so it cannot differ per agent as a spawned one's does; each
 * agent still has its own `DSH_HOME`, where everything dsh keeps lives.
 */
let sharedHome: string | undefined
function inProcessHome(): string {
  if (!sharedHome) {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-user-')))
    process.once('exit', () => rmSync(home, { recursive: true, force: true }))
    sharedHome = home
  }
  return sharedHome
}

export function spawnAgent(
  options: Pick<AgentProcessOptions, 'patch' | 'env' | 'home' | 'workspace' | 'workspaceFiles'> & StartOptions,
): SpawnedAgent {
  const home = options.home ?? realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-home-')))
  const workspace = options.workspace ?? realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-ws-')))
  writeTree(workspace, options.workspaceFiles)
  const patchFile = join(home, `acp-test-${Date.now()}-${Math.random().toString(36).slice(2)}.patch.yml`)
  // The title request after a first turn is off, as in every test composition (@dsh/test-harness WITHOUT_AUTO_TITLE).
  // `[]` (no rows) is a whole YAML document of its own, so it adds nothing after the title row.
  const rows = options.patch.trim() === '[]' ? '' : options.patch
  writeFileSync(patchFile, `- id: session-admin\n  config: { autoTitle: false }\n${rows}`)
  const args = ['acp', '--patch', patchFile, ...(options.args ?? [])]
  const removeFolders = () => {
    if (!options.home) rmSync(home, { recursive: true, force: true })
    if (!options.workspace) rmSync(workspace, { recursive: true, force: true })
  }

  if (!options.process) {
    // A clean environment: nothing of the test runner's (a real API key, say) reaches the agent's plugins.
    const launch = launchInProcess(args, {
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '', HOME: inProcessHome(), DSH_HOME: home, ...options.env },
    })
    // The launch's stdout is utf8 text (its stdout() collects it); the ACP connection reads bytes.
    const output = new PassThrough()
    launch.streams.stdout.on('data', (chunk: string) => output.write(Buffer.from(chunk, 'utf8')))
    launch.streams.stdout.on('end', () => output.end())
    let done = false
    const exited = launch.exited.then((code) => ((done = true), output.end(), code))
    return {
      home,
      workspace,
      input: launch.stdin,
      output,
      exited,
      stderr: launch.stderr,
      async cleanup() {
        if (!done) {
          launch.stdin.end()
          await exited
        }
        removeFolders()
      },
    }
  }

  // A clean environment: nothing of the test runner's (a real API key, say) leaks into the agent.
  const child = spawn(process.execPath, [DSH_BIN, ...args], {
    cwd: workspace,
    env: { PATH: process.env.PATH ?? '', HOME: home, DSH_HOME: home, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    home,
    workspace,
    child,
    input: child.stdin!,
    output: child.stdout!,
    exited,
    stderr: () => stderr,
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin!.end()
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await exited
        clearTimeout(timer)
      }
      removeFolders()
    },
  }
}

/** Starts `dsh acp` in temp folders (in-process unless `process: true`), connects a client, and sends `initialize`. */
export async function startAgent(
  options: AgentProcessOptions & StartOptions,
): Promise<AgentProcess & { initialized: InitializeResponse }> {
  const spawned = spawnAgent(options)
  const { home, workspace, exited } = spawned
  const stderr = () => spawned.stderr()

  const notifications: SessionNotification[] = []
  const listeners = new Set<() => void>()
  const permissionRequests: RequestPermissionRequest[] = []
  const fsReads: AgentProcess['fsReads'] = []
  const fsWrites: AgentProcess['fsWrites'] = []
  const buffers = options.buffers ?? new Map<string, string>()
  const terminals: AgentProcess['terminals'] = []
  const running = new Map<string, EditorTerminal>()
  const terminal = (id: string) => {
    const found = running.get(id)
    if (!found) throw new Error(`no terminal ${id}`)
    return found
  }

  const app = client({ name: 'dsh-acp-test' })
    .onNotification('session/update', ({ params }) => {
      notifications.push(params)
      for (const listener of listeners) listener()
    })
    .onRequest('session/request_permission', async ({ params }) => {
      permissionRequests.push(params)
      if (!options.permission) throw new Error('this test client answers no permission requests')
      return options.permission(params)
    })
    .onRequest('fs/read_text_file', async ({ params }) => {
      fsReads.push({ path: params.path, line: params.line, limit: params.limit })
      const text = buffers.get(params.path) ?? (existsSync(params.path) ? readFileSync(params.path, 'utf8') : undefined)
      if (text === undefined) throw new Error(`no such file: ${params.path}`)
      if (!params.line && !params.limit) return { content: text }
      const lines = text.split('\n')
      const start = (params.line ?? 1) - 1
      return { content: lines.slice(start, params.limit ? start + params.limit : undefined).join('\n') }
    })
    .onRequest('fs/write_text_file', async ({ params }) => {
      fsWrites.push({ path: params.path, content: params.content })
      // Like an editor: the buffer changes (saving is the editor's business, not observed here).
      buffers.set(params.path, params.content)
      return {}
    })
    .onRequest('terminal/create', async ({ params }) => {
      const refusal = options.refuseTerminal?.()
      if (refusal) throw new Error(refusal)
      const id = `term-${terminals.length + 1}`
      terminals.push({
        command: params.command,
        args: params.args ?? [],
        cwd: params.cwd,
        killed: false,
        released: false,
      })
      const env = Object.fromEntries((params.env ?? []).map((variable) => [variable.name, variable.value]))
      const child = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? workspace,
        env: { ...process.env, ...env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const entry: EditorTerminal = {
        child,
        output: '',
        truncated: false,
        limit: params.outputByteLimit ?? undefined,
        exit: new Promise((resolve) => child.once('close', (exitCode, signal) => resolve({ exitCode, signal }))),
      }
      const append = (chunk: Buffer) => {
        entry.output += chunk.toString('utf8')
        // Like an editor: keep the end of the output within the limit.
        if (entry.limit !== undefined && Buffer.byteLength(entry.output) > entry.limit) {
          entry.output = Buffer.from(entry.output).subarray(-entry.limit).toString('utf8')
          entry.truncated = true
        }
      }
      child.stdout!.on('data', append)
      child.stderr!.on('data', append)
      void entry.exit.then((status) => (entry.exitStatus = status))
      running.set(id, entry)
      return { terminalId: id }
    })
    .onRequest('terminal/output', async ({ params }) => {
      const entry = terminal(params.terminalId)
      return {
        output: entry.output,
        truncated: entry.truncated,
        ...(entry.exitStatus ? { exitStatus: entry.exitStatus } : {}),
      }
    })
    .onRequest('terminal/wait_for_exit', async ({ params }) => terminal(params.terminalId).exit)
    .onRequest('terminal/kill', async ({ params }) => {
      const entry = terminal(params.terminalId)
      terminals[Number(params.terminalId.slice(5)) - 1]!.killed = true
      if (!entry.exitStatus) process.kill(-entry.child.pid!, 'SIGKILL')
      return {}
    })
    .onRequest('terminal/release', async ({ params }) => {
      const entry = terminal(params.terminalId)
      terminals[Number(params.terminalId.slice(5)) - 1]!.released = true
      if (!entry.exitStatus) process.kill(-entry.child.pid!, 'SIGKILL')
      running.delete(params.terminalId)
      return {}
    })

  const stream = ndJsonStream(
    Writable.toWeb(spawned.input) as WritableStream<Uint8Array>,
    Readable.toWeb(spawned.output) as unknown as ReadableStream<Uint8Array>,
  )
  const connection = app.connect(stream)
  const agent = connection.agent

  const updates = (sessionId: string) => notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update)
  const process_: AgentProcess = {
    home,
    workspace,
    child: spawned.child,
    connection,
    agent,
    notifications,
    permissionRequests,
    fsReads,
    fsWrites,
    buffers,
    terminals,
    stderr,
    updates,
    waitForUpdate(sessionId, test, timeoutMs = 40_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = updates(sessionId).find(test)
          if (!found) return false
          listeners.delete(check)
          clearTimeout(timer)
          resolve(found)
          return true
        }
        const timer = setTimeout(
          () => (
            listeners.delete(check),
            reject(new Error(`no matching update within ${timeoutMs} ms; stderr:\n${stderr()}`))
          ),
          timeoutMs,
        )
        if (!check()) listeners.add(check)
      })
    },
    async stop() {
      spawned.input.end()
      return exited
    },
    async dispose() {
      await spawned.cleanup()
      connection.close()
    },
  }
  const died = exited.then((code) => {
    throw new Error(`dsh acp exited with ${code} before answering initialize; stderr:\n${stderr()}`)
  })
  try {
    const initialized = await Promise.race([
      agent.request('initialize', {
        protocolVersion: 1,
        clientCapabilities: options.capabilities ?? {},
        clientInfo: { name: 'dsh-acp-test', version: '0' },
      }),
      died,
    ])
    return Object.assign(process_, { initialized })
  } catch (error) {
    await process_.dispose()
    throw new Error(`dsh acp did not answer initialize (${(error as Error).message}); stderr:\n${stderr()}`, {
      cause: error,
    })
  }
}
