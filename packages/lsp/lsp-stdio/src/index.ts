import type { Context } from '@dsh/cordis'
import {
  LanguageServers,
  LspError,
  type DiagnoseOutcome,
  type LanguageInfo,
  type Location,
  type LspCallOptions,
  type SymbolEntry,
  type TextPosition,
} from '@dsh/lsp'
import type { SandboxAuthority } from '@dsh/sandbox'
import { hiddenByPrivateTmp, within } from '@dsh/sandbox-rules'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/settings'
import type {} from '@dsh/subprocess'
import { RequestTimeout, ServerProcess, uriOf } from './client.ts'
import { diagnosticOf, documentSymbolsOf, hoverText, locationsOf, workspaceSymbolsOf } from './convert.ts'
import { DEFAULT_SERVERS, findProgram, languageFor, projectRoot, ServersSchema, type ServerConfig } from './servers.ts'

export { DEFAULT_SERVERS, type ServerConfig } from './servers.ts'

declare module '@dsh/settings' {
  interface Settings {
    'lsp.servers': Record<string, ServerConfig>
  }
}

export interface Config {
  servers: Record<string, ServerConfig>
  diagnosticsWaitMs: number
  firstDiagnosticsWaitMs: number
  diagnosticsSettleMs: number
  firstDiagnosticsSettleMs: number
  startTimeoutMs: number
  requestTimeoutMs: number
  shutdownGraceMs: number
  retryAfterMs: number
  stderrTailBytes: number
}

/** One server a key names: language, project root and whether it runs confined. */
interface Running {
  language: string
  root: string
  started: Promise<ServerProcess>
}

/**
 * ctx.lsp over stdio servers (docs/architecture.md, "Language servers"). A server starts on the first need for
 * its language and project root (one per language per root, and per confinement: confined sessions never share
 * an unconfined server), spawned like a confined command: argv wrapped by ctx.sandbox with a read-only
 * authority (no writable root, no network, the session's secret paths hidden), the environment scrubbed by
 * ctx.subprocess's policy. A session in danger-full-access gets an unconfined server. Every server is an
 * effect: disposing the row shuts them down.
 */
export default class LspStdio extends LanguageServers {
  static inject = ['subprocess', 'settings', 'sandboxPolicy']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    servers: ServersSchema.default(DEFAULT_SERVERS).description(
      'The shipped servers per language id (the setting lsp.servers adds to and overrides them).',
    ),
    diagnosticsWaitMs: Schema.natural()
      .default(3000)
      .description('Longest wait for a file’s diagnostics after an edit or write.'),
    firstDiagnosticsWaitMs: Schema.natural()
      .default(15_000)
      .description(
        'The same wait for a server’s first file, which includes its start and loading the project (typescript: about 3 s).',
      ),
    diagnosticsSettleMs: Schema.natural()
      .default(400)
      .description(
        'Quiet time after a publish before the diagnostics are taken as complete (servers publish syntax errors before type errors).',
      ),
    firstDiagnosticsSettleMs: Schema.natural()
      .default(1500)
      .description('The same quiet time for a server’s first file, whose first type check is slow.'),
    startTimeoutMs: Schema.natural().default(30_000).description('Longest wait for a server to answer initialize.'),
    requestTimeoutMs: Schema.natural().default(15_000).description('Longest wait for one request’s answer.'),
    shutdownGraceMs: Schema.natural()
      .default(2000)
      .description('Time for shutdown/exit, then for SIGTERM, before SIGKILL.'),
    retryAfterMs: Schema.natural()
      .default(60_000)
      .description('After a failed start, the time before the same server is tried again.'),
    stderrTailBytes: Schema.natural()
      .default(4000)
      .description('Bytes of a server’s stderr kept for the message of a failure.'),
  })

  private readonly running = new Map<string, Running>()
  private readonly failures = new Map<string, { message: string; at: number }>()
  /** `<session id>\0<language>` once that session was told its server is missing or failing. */
  private readonly told = new Set<string>()
  private disposed = false

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    ctx.settings.define('lsp.servers', ServersSchema.default({}), {
      description:
        'Language servers per language id: { command: [argv], extensions: [.ext], rootMarkers: [files], install, languageIds, initializationOptions, disabled }. Entries add to and override the shipped ones (typescript, python, go, rust).',
    })
    ctx.effect(
      () => () => {
        this.disposed = true
        const all = [...this.running.values()]
        this.running.clear()
        return Promise.all(
          all.map((entry) => entry.started.then((server) => server.stop()).catch(() => undefined)),
        ).then(() => undefined)
      },
      'language servers',
    )
  }

  private servers(): Record<string, ServerConfig> {
    const merged = { ...this.config.servers, ...this.ctx.settings.get('lsp.servers') }
    return Object.fromEntries(Object.entries(merged).filter(([, server]) => !server.disabled))
  }

  private path() {
    return this.ctx.subprocess.environment().env.PATH
  }

  languages(): LanguageInfo[] {
    const path = this.path()
    return Object.entries(this.servers()).map(([id, server]) => ({
      id,
      extensions: server.extensions,
      command: server.command[0]!,
      available: !!findProgram(server.command[0]!, path),
    }))
  }

  languageOf(path: string): string | undefined {
    return languageFor(this.servers(), path)
  }

  private missingMessage(language: string, server: ServerConfig, file: string) {
    const extension = file.slice(file.lastIndexOf('.'))
    const install = server.install ? `install ${server.command[0]} (${server.install})` : `install ${server.command[0]}`
    return `no language server for ${extension}: ${install}, or configure one in the setting lsp.servers.${language}`
  }

  /** The running (or starting) server for `file`, started on first need; rejects with LspError. */
  private async server(file: string, session: Session): Promise<{ server: ServerProcess; language: string }> {
    if (this.disposed) throw new LspError('LSP_UNAVAILABLE', 'the lsp row is disposed: no language server starts')
    const servers = this.servers()
    const language = languageFor(servers, file)
    if (!language) throw new LspError('LSP_NO_SERVER', `no language server is configured for ${file}`)
    const config = servers[language]!
    const env = this.ctx.subprocess.environment().env
    const program = findProgram(config.command[0]!, env.PATH)
    const { root, marked } = projectRoot(file, session.cwd, config.rootMarkers)
    if (!program)
      throw new LspError(
        'LSP_UNAVAILABLE',
        this.missingMessage(language, config, file),
        // Outside a project of the language (no root marker), a missing server is not worth a word.
        !marked && config.rootMarkers.length > 0,
      )
    const authority = await this.ctx.sandboxPolicy.authority(session)
    const confined = authority.mode !== 'danger-full-access'
    const key = `${language}\0${root}\0${confined ? 'confined' : 'host'}`
    const failure = this.failures.get(key)
    if (failure && Date.now() - failure.at < this.config.retryAfterMs)
      throw new LspError('LSP_UNAVAILABLE', failure.message)
    let entry = this.running.get(key)
    if (!entry) {
      const started = this.start(language, config, program, root, confined ? authority : undefined, env)
      entry = { language, root, started }
      this.running.set(key, entry)
      const current = entry
      started.then(
        (server) =>
          void server.exited.then(() => {
            if (this.running.get(key) === current) this.running.delete(key)
          }),
        (error: Error) => {
          if (this.running.get(key) === current) this.running.delete(key)
          this.failures.set(key, { message: error.message, at: Date.now() })
        },
      )
    }
    try {
      return { server: await entry.started, language }
    } catch (error) {
      throw new LspError('LSP_UNAVAILABLE', (error as Error).message)
    }
  }

  private async start(
    language: string,
    config: ServerConfig,
    program: string,
    root: string,
    authority: SandboxAuthority | undefined,
    env: Record<string, string>,
  ): Promise<ServerProcess> {
    let argv = [program, ...config.command.slice(1)]
    if (authority) {
      const sandbox = this.ctx.get('sandbox')
      if (!sandbox)
        throw new Error(
          `${language} language server (${config.command[0]}) not started: a confined mode is in force and no sandbox row is mounted`,
        )
      // Read-only: the server reads the project but writes nowhere (a private /tmp aside) and has no network.
      // A server installed under /tmp (a checkout there) would be hidden by the sandbox's private /tmp.
      const hidden = hiddenByPrivateTmp(argv)
      const readOnly: SandboxAuthority = {
        mode: 'read-only',
        writableRoots: [],
        ...(authority.paths ? { paths: authority.paths } : {}),
        ...(hidden.length ? { readableRoots: hidden } : {}),
        network: { kind: 'none' },
      }
      argv = (await sandbox.confine(argv, { cwd: root, authority: readOnly })).argv
    }
    const server = new ServerProcess({
      language,
      argv,
      program: config.command[0]!,
      root,
      confined: !!authority,
      env,
      languageIds: config.languageIds,
      initializationOptions: config.initializationOptions,
      startTimeoutMs: this.config.startTimeoutMs,
      requestTimeoutMs: this.config.requestTimeoutMs,
      shutdownGraceMs: this.config.shutdownGraceMs,
      stderrTailBytes: this.config.stderrTailBytes,
    })
    await server.start()
    // The row went away while the server started: nothing would stop it later.
    if (this.disposed) {
      await server.stop()
      throw new Error(`${language} language server not kept: the lsp row was disposed while it started`)
    }
    this.ctx
      .logger('lsp')
      .info('started %s language server for %s (%s)', language, root, authority ? 'confined' : 'unconfined')
    return server
  }

  async diagnose(path: string, text: string, options: LspCallOptions): Promise<DiagnoseOutcome> {
    const servers = this.servers()
    const language = languageFor(servers, path)
    if (!language) return { kind: 'none' }
    try {
      const { server } = await this.server(path, options.session)
      const warm = server.diagnosed
      const result = await server.diagnose(path, text, {
        waitMs: warm ? this.config.diagnosticsWaitMs : this.config.firstDiagnosticsWaitMs,
        settleMs: warm ? this.config.diagnosticsSettleMs : this.config.firstDiagnosticsSettleMs,
        signal: options.signal,
      })
      return {
        kind: 'diagnostics',
        language,
        server: language,
        diagnostics: result.diagnostics.map(diagnosticOf),
        settled: result.settled,
      }
    } catch (error) {
      if (error instanceof LspError && error.quiet) return { kind: 'none' }
      const key = `${options.session.id}\0${language}`
      if (this.told.has(key)) return { kind: 'unavailable', language }
      this.told.add(key)
      return { kind: 'unavailable', language, notice: (error as Error).message }
    }
  }

  private async ask<R>(
    at: { path: string; text: string },
    options: LspCallOptions,
    method: string,
    params: (uri: string) => unknown,
  ): Promise<R> {
    const { server } = await this.server(at.path, options.session)
    // A server that has not yet reported on any file may still be loading its project, and answer from the
    // open file alone (typescript-language-server routes to its syntax server meanwhile): its first diagnostics
    // say the project is loaded.
    if (!server.diagnosed)
      await server.diagnose(at.path, at.text, {
        waitMs: this.config.firstDiagnosticsWaitMs,
        settleMs: this.config.firstDiagnosticsSettleMs,
        signal: options.signal,
      })
    server.sync(at.path, at.text)
    try {
      return await server.request<R>(method, params(uriOf(at.path)), options.signal)
    } catch (error) {
      throw new LspError(error instanceof RequestTimeout ? 'LSP_TIMEOUT' : 'LSP_FAILED', (error as Error).message)
    }
  }

  private static position(at: TextPosition) {
    return { line: at.line - 1, character: at.column - 1 }
  }

  async definition(at: TextPosition, options: LspCallOptions): Promise<Location[]> {
    return locationsOf(
      await this.ask(at, options, 'textDocument/definition', (uri) => ({
        textDocument: { uri },
        position: LspStdio.position(at),
      })),
    )
  }

  async references(at: TextPosition, options: LspCallOptions): Promise<Location[]> {
    return locationsOf(
      await this.ask(at, options, 'textDocument/references', (uri) => ({
        textDocument: { uri },
        position: LspStdio.position(at),
        context: { includeDeclaration: true },
      })),
    )
  }

  async hover(at: TextPosition, options: LspCallOptions): Promise<string> {
    return hoverText(
      await this.ask(at, options, 'textDocument/hover', (uri) => ({
        textDocument: { uri },
        position: LspStdio.position(at),
      })),
    )
  }

  async documentSymbols(file: { path: string; text: string }, options: LspCallOptions): Promise<SymbolEntry[]> {
    return documentSymbolsOf(
      file.path,
      await this.ask(file, options, 'textDocument/documentSymbol', (uri) => ({ textDocument: { uri } })),
    )
  }

  async workspaceSymbols(query: string, near: string | undefined, options: LspCallOptions): Promise<SymbolEntry[]> {
    const servers: (ServerProcess | undefined)[] = near
      ? [(await this.server(near, options.session)).server]
      : await Promise.all(
          [...this.running.values()]
            .filter((entry) => within(entry.root, options.session.cwd))
            .map((entry) => entry.started.catch(() => undefined)),
        )
    const live = servers.filter((server): server is ServerProcess => !!server?.alive)
    if (!live.length)
      throw new LspError(
        'LSP_NO_SERVER',
        'no language server runs for this workspace yet: pass path (any file of the language) to start one',
      )
    const answers = await Promise.all(
      live.map((server) =>
        server
          .request<Parameters<typeof workspaceSymbolsOf>[0]>('workspace/symbol', { query }, options.signal)
          .catch((error: Error) => {
            throw new LspError(error instanceof RequestTimeout ? 'LSP_TIMEOUT' : 'LSP_FAILED', error.message)
          }),
      ),
    )
    return answers.flatMap((answer) => workspaceSymbolsOf(answer))
  }
}
