// Runs the real SDK runtime (`dsh --profile sdk`) in a temp home and workspace and speaks raw JSON lines to it:
// in the test's own process (the launcher's `run()` over a stream pair, @dsh/test-harness `launchInProcess`), or,
// with `process: true`, spawned (`node apps/cli/bin/dsh.js`, the bundle) for tests whose subject is the process:
// its exit, its signals, what reaches its real stdout. Only the model is fake: the real DeepSeek adapter talks
// to the mock model server (`@dsh/llm-mock-server`) of the test process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { appDir, launchInProcess, WITHOUT_AUTO_TITLE } from '@dsh/test-harness'
import type { MockServer } from '@dsh/llm-mock-server'

const require = createRequire(import.meta.url)
/** The built file of a workspace export (vitest resolves the `@dsh/source` condition; the runtime runs dist). */
const built = (specifier: string) => require.resolve(specifier).replace(/\/src\/(.*)\.ts$/, '/dist/$1.js')
export const launcher = join(appDir, 'bin/dsh.js')
export const fixtureTools = built('@dsh/test-harness/fixture-tools')
export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))

/** A patch mounting the test harness's fixture tools (`write_file` asks for approval under protected/). */
export function fixtureToolsPatch(extra = ''): string {
  return `- insert: [{ id: fixture-tools, name: ${JSON.stringify(fixtureTools)} }]\n${extra}`
}

export interface RuntimeOptions {
  /** The mock model server the runtime's DeepSeek adapter talks to. */
  llm?: MockServer
  patch?: string
  /** Reuse a home (a second process resuming the first one's sessions). */
  home?: string
  workspace?: string
  env?: Record<string, string>
  args?: string[]
  /** Spawn the runtime as a process (its exit, signals and real stdout are the subject); in-process otherwise. */
  process?: boolean
}

export interface Message {
  jsonrpc: '2.0'
  id?: string | number | null
  method?: string
  params?: any
  result?: any
  error?: { code: number; message: string; data?: any }
}

export interface Runtime {
  /** The spawned process (`process: true` only). */
  child?: ChildProcessWithoutNullStreams
  home: string
  workspace: string
  /** Every message the runtime wrote to stdout, in order. */
  messages: Message[]
  /** Lines of stdout that were not JSON (must stay empty). */
  junk: string[]
  stderr(): string
  /** Waits until stderr contains `text`. */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>
  /** Writes one raw line (a newline is added). */
  write(line: string): void
  send(message: object): void
  /** Sends a request and waits for its response. */
  request(method: string, params?: unknown): Promise<Message>
  /** Waits for the first message (seen or to come) matching `test`. */
  waitFor(test: (message: Message) => boolean, what?: string, timeoutMs?: number): Promise<Message>
  notifications(method: string): Message[]
  /** `session.event` payloads of one session, optionally of one kind. */
  events(sessionId: string, type?: string): any[]
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Kills the process if still alive and removes temp folders it made. */
  dispose(): Promise<void>
}

export async function startRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const home = options.home ?? realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-home-')))
  const workspace = options.workspace ?? realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-ws-')))
  const args = [launcher, '--profile', 'sdk', ...(options.args ?? [])]
  {
    // The title request is off, as in every test composition (WITHOUT_AUTO_TITLE).
    const file = join(home, `test-${Date.now()}-${Math.random().toString(36).slice(2)}.patch.yml`)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, WITHOUT_AUTO_TITLE + (options.patch ?? ''))
    args.push('--patch', file)
  }
  const model: Record<string, string> = options.llm
    ? { DEEPSEEK_BASE_URL: options.llm.url, DEEPSEEK_API_KEY: 'test' }
    : {}
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DSH_HOME: home,
    ...model,
    ...options.env,
  }
  let child: ChildProcessWithoutNullStreams | undefined
  let stdin: NodeJS.WritableStream
  let stdout: NodeJS.ReadableStream
  let stderrStream: NodeJS.ReadableStream
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  if (options.process) {
    child = spawn(process.execPath, args, { cwd: workspace, env })
    ;({ stdin, stdout, stderr: stderrStream } = child)
    exited = new Promise((resolve) => child!.once('exit', (code, signal) => resolve({ code, signal })))
  } else {
    const launch = launchInProcess(args.slice(1), { env, cwd: workspace })
    ;({ stdin } = launch)
    ;({ stdout, stderr: stderrStream } = launch.streams)
    exited = launch.exited.then((code) => ({ code, signal: null }))
  }
  let ended = false
  let endedWith: number | string | null = null
  const messages: Message[] = []
  const junk: string[] = []
  const waiters = new Set<() => void>()
  let stderr = ''
  let buffered = ''
  stdout.setEncoding('utf8')
  stdout.on('data', (chunk: string) => {
    buffered += chunk
    let newline: number
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      try {
        messages.push(JSON.parse(line))
      } catch {
        junk.push(line)
      }
    }
    for (const wake of waiters) wake()
  })
  stderrStream.on('data', (chunk) => (stderr += chunk))
  void exited.then((result) => {
    ended = true
    endedWith = result.code ?? result.signal
    for (const wake of waiters) wake()
  })
  let nextId = 1

  const waitFor = (test: (message: Message) => boolean, what = 'a message', timeoutMs = 40_000) =>
    new Promise<Message>((resolve, reject) => {
      const check = () => {
        const found = messages.find(test)
        if (found) {
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        } else if (ended) {
          waiters.delete(check)
          clearTimeout(timer)
          reject(new Error(`the runtime exited (${endedWith}) before ${what}; stderr:\n${stderr}`))
        }
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })

  const runtime: Runtime = {
    child,
    home,
    workspace,
    messages,
    junk,
    stderr: () => stderr,
    async waitForStderr(text, timeoutMs = 40_000) {
      const deadline = Date.now() + timeoutMs
      while (!stderr.includes(text)) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for stderr to contain ${JSON.stringify(text)}; stderr:\n${stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
    write: (line) => void stdin.write(line + '\n'),
    send: (message) => void stdin.write(JSON.stringify(message) + '\n'),
    request(method, params) {
      const id = nextId++
      runtime.send({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })
      return waitFor((message) => message.id === id && !message.method, `the response to ${method} (#${id})`)
    },
    waitFor,
    notifications: (method) => messages.filter((message) => message.method === method && message.id === undefined),
    events: (sessionId, type) =>
      messages
        .filter(
          (m) =>
            m.method === 'session.event' && m.params.sessionId === sessionId && (!type || m.params.event.type === type),
        )
        .map((m) => m.params.event),
    exited,
    async dispose() {
      if (!ended) {
        // In-process, the server ends the launch when its input ends (as a spawned one does).
        if (child) child.kill('SIGKILL')
        else stdin.end()
        await exited
      }
      if (!options.home) rmSync(home, { recursive: true, force: true })
      if (!options.workspace) rmSync(workspace, { recursive: true, force: true })
    },
  }
  return runtime
}

/** Starts a runtime and initializes it. */
export async function startInitialized(options: RuntimeOptions & { approvals?: boolean } = {}): Promise<Runtime> {
  const runtime = await startRuntime(options)
  const reply = await runtime.request('initialize', {
    protocolVersion: 1,
    clientInfo: { name: 'protocol-test' },
    capabilities: { approvals: options.approvals ?? false },
  })
  if (reply.error) throw new Error(`initialize failed: ${JSON.stringify(reply.error)}`)
  return runtime
}
