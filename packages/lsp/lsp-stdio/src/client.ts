import { spawn, type ChildProcess } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import {
  CancellationTokenSource,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node.js'
import {
  DidCloseTextDocumentNotification,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  type Diagnostic as LspDiagnostic,
} from 'vscode-languageserver-protocol/node.js'

/** How one server process is started and bounded (from the provider's Config). */
export interface ServerPlan {
  language: string
  /** The argv to spawn (already confined when the session is). */
  argv: string[]
  /** The program as configured, for messages. */
  program: string
  root: string
  /** The argv is a sandbox's (the server cannot see dsh's process). */
  confined: boolean
  env: Record<string, string>
  languageIds: Record<string, string>
  initializationOptions: Record<string, unknown>
  startTimeoutMs: number
  requestTimeoutMs: number
  shutdownGraceMs: number
  stderrTailBytes: number
}

interface OpenDocument {
  version: number
  text: string
}

interface Published {
  seq: number
  diagnostics: LspDiagnostic[]
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: () => Error): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(what()), ms)
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    )
  })

/** A request the server did not answer within the deadline. */
export class RequestTimeout extends Error {
  override name = 'RequestTimeout'
}

export const uriOf = (path: string) => pathToFileURL(path).href

/**
 * One language server process over stdio (vscode-jsonrpc framing): initialize, documents kept in step with the
 * text callers give, published diagnostics per file, requests with a deadline, and shutdown → exit → kill.
 */
export class ServerProcess {
  private child!: ChildProcess
  private connection!: MessageConnection
  private readonly documents = new Map<string, OpenDocument>()
  private readonly published = new Map<string, Published>()
  private readonly listeners = new Set<(uri: string) => void>()
  private seq = 0
  /** True once a diagnose has heard the server (its project is loaded: later waits can be short). */
  diagnosed = false
  private tail = ''
  private exitMessage: string | undefined
  readonly exited: Promise<void>
  private markExited!: () => void

  constructor(readonly plan: ServerPlan) {
    this.exited = new Promise((resolve) => (this.markExited = resolve))
  }

  get alive() {
    return this.exitMessage === undefined
  }

  /** What the server said on stderr last (a few lines), for a failure's message. */
  stderrTail(): string {
    return this.tail.trim().split('\n').slice(-3).join(' | ')
  }

  private describe(what: string) {
    const tail = this.stderrTail()
    return `${this.plan.language} language server (${this.plan.program}) ${what}${tail ? `; its stderr: ${tail}` : ''}`
  }

  /** Spawns and initializes; rejects with an Error naming the server and what failed. */
  async start(): Promise<void> {
    const { argv, root, env } = this.plan
    const child = spawn(argv[0]!, argv.slice(1), { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    this.child = child
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', (error) => reject(new Error(this.describe(`could not start: ${error.message}`))))
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-this.plan.stderrTailBytes)
    })
    child.once('exit', (code, signal) => {
      this.exitMessage = signal ? `was ended by ${signal}` : `exited with status ${code}`
      this.connection?.dispose()
      this.markExited()
      for (const listener of this.listeners) listener('')
    })
    // A closed pipe of a dying server must not be an uncaught error of dsh.
    child.stdin!.on('error', () => {})
    await spawned
    this.connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    )
    this.connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
      this.published.set(params.uri, { seq: ++this.seq, diagnostics: params.diagnostics })
      for (const listener of this.listeners) listener(params.uri)
    })
    // Requests from the server (progress, registrations, message boxes) are answered empty; configuration with
    // one empty value per item asked (the server's defaults), as the protocol wants an array there.
    this.connection.onRequest((method, params) =>
      method === 'workspace/configuration'
        ? ((params as { items?: unknown[] } | undefined)?.items ?? []).map(() => null)
        : null,
    )
    this.connection.onError(() => undefined)
    this.connection.listen()
    const rootUri = uriOf(root)
    const initialize = this.connection.sendRequest(InitializeRequest.type, {
      // A confined server lives in its own PID namespace, where dsh's pid is no process: a server that watches
      // its parent (vscode-languageserver does) would exit at once. The sandbox ends it with dsh instead.
      processId: this.plan.confined ? null : process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: root }],
      initializationOptions: this.plan.initializationOptions,
      capabilities: {
        textDocument: {
          synchronization: { dynamicRegistration: false, didSave: false },
          publishDiagnostics: { relatedInformation: false, versionSupport: true },
          hover: { contentFormat: ['markdown', 'plaintext'] },
          definition: { linkSupport: true },
          references: {},
          documentSymbol: { hierarchicalDocumentSymbolSupport: true },
        },
        workspace: { symbol: {}, workspaceFolders: true, configuration: false },
        window: { workDoneProgress: false },
      },
    })
    const gone = this.exited.then(() => Promise.reject(new Error(this.describe(this.exitMessage!))))
    await withTimeout(
      Promise.race([initialize, gone]),
      this.plan.startTimeoutMs,
      () => new Error(this.describe(`did not answer initialize within ${this.plan.startTimeoutMs} ms`)),
    ).catch((error: Error) => {
      void this.stop()
      throw error.message.includes(this.plan.program) ? error : new Error(this.describe(`failed: ${error.message}`))
    })
    this.notify(InitializedNotification.method, {})
  }

  /** A notification; a server that is gone by then is noticed by its exit, not by a failed write. */
  private notify(method: string, params?: unknown) {
    this.connection.sendNotification(method, params).catch(() => undefined)
  }

  private languageId(path: string) {
    const dot = path.lastIndexOf('.')
    return this.plan.languageIds[path.slice(dot).toLowerCase()] ?? this.plan.language
  }

  /** Makes the server's copy of `path` equal `text` (open it, or a full-text change). */
  sync(path: string, text: string) {
    const uri = uriOf(path)
    const open = this.documents.get(uri)
    if (open && open.text === text) return
    if (!open) {
      this.documents.set(uri, { version: 1, text })
      this.notify(DidOpenTextDocumentNotification.method, {
        textDocument: { uri, languageId: this.languageId(path), version: 1, text },
      })
      return
    }
    open.version += 1
    open.text = text
    this.notify(DidChangeTextDocumentNotification.method, {
      textDocument: { uri, version: open.version },
      contentChanges: [{ text }],
    })
  }

  /**
   * `path` was written with `text`: close it (when open), wait until the server has handled that (a request
   * it must answer, even with "method not found"), then open it afresh, so what it publishes from then on is
   * about this text — a server that publishes only changes would otherwise stay silent about an unchanged
   * state. Then waits for the file's diagnostics: until the server is quiet for `settleMs` after a publish,
   * at most `waitMs`.
   */
  async diagnose(
    path: string,
    text: string,
    bounds: { waitMs: number; settleMs: number; signal: AbortSignal },
  ): Promise<{ diagnostics: LspDiagnostic[]; settled: boolean; heard: boolean }> {
    const uri = uriOf(path)
    if (this.documents.has(uri)) {
      this.documents.delete(uri)
      this.notify(DidCloseTextDocumentNotification.method, { textDocument: { uri } })
    }
    await withTimeout(
      this.connection.sendRequest('dsh/barrier').then(
        () => undefined,
        () => undefined,
      ),
      bounds.waitMs,
      () => new Error('barrier'),
    ).catch(() => undefined)
    const since = this.seq
    this.sync(path, text)
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined
      const finish = (settled: boolean) => {
        clearTimeout(quiet)
        clearTimeout(deadline)
        this.listeners.delete(listener)
        bounds.signal.removeEventListener('abort', aborted)
        const last = this.published.get(uri)
        const heard = !!last && last.seq > since
        if (heard) this.diagnosed = true
        resolve({ diagnostics: heard ? last.diagnostics : [], settled: settled && heard, heard })
      }
      const listener = (published: string) => {
        if (!this.alive) return finish(false)
        if (published !== uri) return
        clearTimeout(quiet)
        quiet = setTimeout(() => finish(true), bounds.settleMs)
      }
      const aborted = () => finish(false)
      const deadline = setTimeout(() => finish(false), bounds.waitMs)
      this.listeners.add(listener)
      bounds.signal.addEventListener('abort', aborted, { once: true })
    })
  }

  /**
   * A request with the plan's deadline; aborting or the deadline cancels it on the server ($/cancelRequest).
   * An error names the server and the method; the deadline's is a RequestTimeout.
   */
  async request<R>(method: string, params: unknown, signal: AbortSignal): Promise<R> {
    if (!this.alive) throw new Error(this.describe(this.exitMessage!))
    const cancel = new CancellationTokenSource()
    const onAbort = () => cancel.cancel()
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      return await withTimeout(
        this.connection.sendRequest(method, params, cancel.token) as Promise<R>,
        this.plan.requestTimeoutMs,
        () => new RequestTimeout(this.describe(`did not answer ${method} within ${this.plan.requestTimeoutMs} ms`)),
      )
    } catch (error) {
      if (error instanceof RequestTimeout) throw error
      const message = (error as Error).message
      throw new Error(message.includes(this.plan.program) ? message : this.describe(`failed ${method}: ${message}`), {
        cause: error,
      })
    } finally {
      signal.removeEventListener('abort', onAbort)
      if (!signal.aborted) cancel.cancel()
      cancel.dispose()
    }
  }

  /** shutdown → exit, then SIGTERM → SIGKILL on the process group after the grace. Resolves once it is gone. */
  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return
    const grace = this.plan.shutdownGraceMs
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-this.child.pid!, signal)
      } catch {
        this.child.kill(signal)
      }
    }
    if (this.alive && this.connection) {
      await withTimeout(this.connection.sendRequest(ShutdownRequest.type), grace, () => new Error('shutdown')).catch(
        () => undefined,
      )
      if (this.alive) this.notify(ExitNotification.method)
    }
    const exited = (ms: number) =>
      withTimeout(this.exited, ms, () => new Error('alive')).then(
        () => true,
        () => false,
      )
    if (await exited(grace)) return
    kill('SIGTERM')
    if (await exited(grace)) return
    kill('SIGKILL')
    await exited(grace)
  }
}
