import { AsyncLocalStorage } from 'node:async_hooks'
import {
  agent as agentApp,
  type AgentApp,
  type CreateTerminalRequest,
  type Stream,
  type TerminalHandle,
} from '@agentclientprotocol/sdk'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import { UsageError } from '@dsh/cmdline'
import type {} from '@dsh/credentials'
import type {} from '@dsh/permission-presets'
import type {} from '@dsh/tools'
import type {} from '@dsh/usage-prices'
import { AcpConnection, connectionClosed, type Config } from './connection.ts'
import { registerMethods } from './methods.ts'
import { stdioStream } from './stdio.ts'

export type { Config }

declare module '@dsh/cordis' {
  interface Context {
    acp: Acp
  }
}

/** The editor session and tool call a tool body runs for (fs-acp and shell-acp route through the editor with it). */
export interface ToolScope {
  sessionId: string
  callId: string
}

const TOOL_KINDS = [
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'switch_mode',
  'other',
] as const

/**
 * dsh as an Agent Client Protocol agent on stdio (docs/architecture.md, "Surfaces"). Owns: the
 * stdio connection's lifetime, the tool scope, the approval answerer, and the API the providers that route
 * through the editor consult (fs-acp, shell-acp), each delegated to the `AcpConnection`; the connection owns
 * the editor's sessions and the methods are registered over it, so nothing calls this service back. Must not
 * own: what a turn does, approval policy, or the session log itself.
 */
export class Acp extends Service {
  static inject = ['app', 'cmdlineArgs', 'agents', 'sessions', 'approval', 'llm', 'tools', 'credentials']
  static Config: Schema<Config> = Schema.object({
    toolKinds: Schema.dict(Schema.union(TOOL_KINDS))
      .default({
        read: 'read',
        write: 'edit',
        edit: 'edit',
        'str_replace_editor:view': 'read',
        str_replace_editor: 'edit',
        bash: 'execute',
        grep: 'search',
        glob: 'search',
        read_file: 'read',
        write_file: 'edit',
      })
      .description(
        'The ACP tool kind of each tool (`name`, or `name:command` for a tool with a `command` argument); editors pick icons and diff views by it. Unlisted tools are `other`.',
      ),
    authKeys: Schema.dict(Schema.string())
      .default({ deepseek: 'DEEPSEEK_API_KEY', anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' })
      .description('The credential each provider needs, offered as an ACP authentication method while it is missing.'),
    listPageSize: Schema.natural().min(1).default(50).description('Sessions per page of `session/list`.'),
    diffMaxBytes: Schema.natural()
      .default(1_048_576)
      .description('Largest file read to show a whole-file diff of an edit (larger files show the replaced fragment).'),
    toolOutputMaxChars: Schema.natural()
      .min(1)
      .default(20_000)
      .description('Longest tool output text sent to the editor (the session log keeps all of it).'),
  })

  private readonly scopes = new AsyncLocalStorage<ToolScope>()
  /** The editor's connection, once it opened (it stays after closing: its sessions are still known, its calls refused). */
  private connection: AcpConnection | undefined

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx, 'acp')
    // Everything is said over stdio: the profile takes no arguments, and a stray one (a typo in an editor's
    // agent configuration) is refused at boot (exit 2, shown in the editor's agent log) rather than ignored.
    const { positionals } = ctx.cmdlineArgs.parse({})
    if (positionals.length)
      throw new UsageError(
        `dsh acp takes no arguments; the editor speaks to it on stdin and stdout (got "${positionals.join(' ')}")`,
      )
    ctx.on('session/event', (session, event) => this.connection?.sessions.get(session.id)?.tell(event, 'live'))
    // A tool body for an editor session runs in its scope, so providers can route its I/O through the editor.
    // Outermost (prepend): what the other listeners read around the body (the checkpoints of its file) is
    // read through the editor too, so a diff's old side is the buffer the tool edited.
    ctx.on(
      'tools/execute',
      (invocation, next) => {
        const sessionId = invocation.context.session.id
        return this.connection?.sessions.has(sessionId)
          ? this.scopes.run({ sessionId, callId: invocation.callId }, next)
          : next()
      },
      { prepend: true },
    )
    ctx.approval.answerer(
      ctx,
      async (request, signal) => (this.connection ? this.connection.askPermission(request, signal) : 'reject'),
      { actor: 'client:acp' },
    )
    ctx.effect(() => {
      const { stream, release } = stdioStream(ctx.app.stdio)
      if (ctx.app.stdio.stdin.isTTY)
        ctx
          .logger('acp')
          .warn(
            'dsh acp speaks the Agent Client Protocol on stdin and stdout: an editor launches it (see docs/editors.md)',
          )
      this.connect(stream)
      return () => {
        // Our own teardown is not the editor going away: no exit request for it.
        this.connection?.close()
        release()
      }
    }, 'acp stdio connection')
  }

  /** The tool scope of the async context this is called in, when a tool body runs for an editor session. */
  toolScope(): ToolScope | undefined {
    return this.scopes.getStore()
  }

  get canReadFiles(): boolean {
    return !!this.connection?.canReadFiles
  }

  get canWriteFiles(): boolean {
    return !!this.connection?.canWriteFiles
  }

  get hasTerminal(): boolean {
    return !!this.connection?.hasTerminal
  }

  /** Reads a file as the editor has it (unsaved changes included). */
  async readTextFile(sessionId: string, path: string, range: { line?: number; limit?: number } = {}): Promise<string> {
    return this.opened().readTextFile(sessionId, path, range)
  }

  /** Writes a file through the editor (the caller has checked its authority). */
  async writeTextFile(sessionId: string, path: string, content: string): Promise<void> {
    return this.opened().writeTextFile(sessionId, path, content)
  }

  /** Starts a command in a terminal of the editor. */
  createTerminal(params: CreateTerminalRequest): Promise<TerminalHandle> {
    return this.opened().createTerminal(params)
  }

  /** Shows a terminal as the output of a tool call (before the terminal is released). */
  async showTerminal(scope: ToolScope, terminalId: string): Promise<void> {
    await this.connection?.showTerminal(scope.sessionId, scope.callId, terminalId)
  }

  private opened(): AcpConnection {
    if (!this.connection) throw connectionClosed()
    return this.connection
  }

  /**
   * Opens the connection on a stream: the methods are registered over a new `AcpConnection` (never over
   * this service), so calls go one way, methods → connection (docs/architecture.md, "Surfaces").
   */
  private connect(stream: Stream): void {
    const app: AgentApp = agentApp({ name: 'dsh' })
    const connection = new AcpConnection(this.ctx, this.config)
    registerMethods(app, connection)
    this.connection = connection
    void connection.attach(app.connect(stream)).then((byEditor) => {
      // The editor went away: the launch is over (the launcher drains the tree).
      if (byEditor && this.connection === connection) this.ctx.app.requestExit(0)
    })
  }
}
