import { AsyncLocalStorage } from 'node:async_hooks'
import {
  agent as agentApp,
  type AgentApp,
  type AgentConnection,
  type ClientCapabilities,
  type CreateTerminalRequest,
  type PermissionOption,
  type Stream,
  type ToolKind,
  type TerminalHandle,
} from '@agentclientprotocol/sdk'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent } from '@dsh/agent'
import type { ApprovalAnswer, ApprovalRequest } from '@dsh/approval'
import type {} from '@dsh/app'
import { UsageError } from '@dsh/cmdline'
import type {} from '@dsh/credentials'
import type {} from '@dsh/permission-presets'
import type { Route } from '@dsh/llm'
import type {} from '@dsh/tools'
import type {} from '@dsh/usage-prices'
import type { Checkpoints } from '@dsh/checkpoints'
import { AcpSession } from './acp-session.ts'
import { AcpError, editorFailure } from './errors.ts'
import { registerMethods } from './methods.ts'
import { modeState, type PresetSource } from './options.ts'
import { stdioStream } from './stdio.ts'
import { kindOf } from './tool-calls.ts'
import { turnChangesSummary } from './turn-changes.ts'

declare module '@dsh/cordis' {
  interface Context {
    acp: Acp
  }
}

export interface Config {
  toolKinds: Record<string, ToolKind>
  authKeys: Record<string, string>
  listPageSize: number
  diffMaxBytes: number
  toolOutputMaxChars: number
}

/** The editor session and tool call a tool body runs for (fs-acp and shell-acp route through the editor with it). */
export interface ToolScope {
  sessionId: string
  callId: string
}

const TOOL_KINDS = ['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other'] as const

/**
 * dsh as an Agent Client Protocol agent on stdio (DESIGN §10; docs/architecture.md, "Surfaces"). Owns: the
 * connection, the editor's sessions (each a dsh agent), turning the log into streamed updates, asking the
 * editor for approvals, and the client's capabilities for the providers that route through the editor
 * (fs-acp, shell-acp). Must not own: what a turn does, approval policy, or the session log itself.
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
      .description('The ACP tool kind of each tool (`name`, or `name:command` for a tool with a `command` argument); editors pick icons and diff views by it. Unlisted tools are `other`.'),
    authKeys: Schema.dict(Schema.string())
      .default({ deepseek: 'DEEPSEEK_API_KEY', anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' })
      .description('The credential each provider needs, offered as an ACP authentication method while it is missing.'),
    listPageSize: Schema.natural().min(1).default(50).description('Sessions per page of `session/list`.'),
    diffMaxBytes: Schema.natural().default(1_048_576).description('Largest file read to show a whole-file diff of an edit (larger files show the replaced fragment).'),
    toolOutputMaxChars: Schema.natural().min(1).default(20_000).description('Longest tool output text sent to the editor (the session log keeps all of it).'),
  })

  readonly sessions = new Map<string, AcpSession>()
  private readonly scopes = new AsyncLocalStorage<ToolScope>()
  private connection: AgentConnection | undefined
  /** What the client said it can do in `initialize`. */
  clientCapabilities: ClientCapabilities | undefined

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx, 'acp')
    // Everything is said over stdio: the profile takes no arguments, and a stray one (a typo in an editor's
    // agent configuration) is refused at boot (exit 2, shown in the editor's agent log) rather than ignored.
    const { positionals } = ctx.cmdlineArgs.parse({})
    if (positionals.length) throw new UsageError(`dsh acp takes no arguments; the editor speaks to it on stdin and stdout (got "${positionals.join(' ')}")`)
    ctx.on('session/event', (session, event) => this.sessions.get(session.id)?.tell(event, 'live'))
    // A tool body for an editor session runs in its scope, so providers can route its I/O through the editor.
    // Outermost (prepend): what the other listeners read around the body (the checkpoints of its file) is
    // read through the editor too, so a diff's old side is the buffer the tool edited.
    ctx.on(
      'tools/execute',
      (invocation, next) => {
        const sessionId = invocation.context.session.id
        return this.sessions.has(sessionId) ? this.scopes.run({ sessionId, callId: invocation.callId }, next) : next()
      },
      { prepend: true },
    )
    ctx.approval.answerer(ctx, (request, signal) => this.askPermission(request, signal), { actor: 'client:acp' })
    ctx.effect(() => {
      const { stream, release } = stdioStream(ctx.app.stdio)
      if (ctx.app.stdio.stdin.isTTY) ctx.logger('acp').warn('dsh acp speaks the Agent Client Protocol on stdin and stdout: an editor launches it (see docs/editors.md)')
      this.connect(stream)
      return () => {
        const connection = this.connection
        // Our own teardown is not the editor going away: no exit request for it.
        this.connection = undefined
        connection?.close()
        release()
      }
    }, 'acp stdio connection')
  }

  /** The permission presets, when a row mounts them (modes are offered only then). */
  get presets(): PresetSource | undefined {
    return this.ctx.get('permissionPresets')
  }

  /** The route a new session starts on (the user's settings, else the `agents` row's route). */
  defaultRoute(): Route {
    return this.ctx.agents.defaultRoute()
  }

  /** The tool scope of the async context this is called in, when a tool body runs for an editor session. */
  toolScope(): ToolScope | undefined {
    return this.scopes.getStore()
  }

  get canReadFiles(): boolean {
    return !!this.connection && !!this.clientCapabilities?.fs?.readTextFile
  }

  get canWriteFiles(): boolean {
    return !!this.connection && !!this.clientCapabilities?.fs?.writeTextFile
  }

  get hasTerminal(): boolean {
    return !!this.connection && !!this.clientCapabilities?.terminal
  }

  /** Reads a file as the editor has it (unsaved changes included). */
  async readTextFile(sessionId: string, path: string, range: { line?: number; limit?: number } = {}): Promise<string> {
    const response = await this.client()
      .request('fs/read_text_file', { sessionId, path, ...range })
      .catch((error: unknown) => {
        throw editorFailure('fs/read_text_file', error)
      })
    return response.content
  }

  /** Writes a file through the editor (the caller has checked its authority). */
  async writeTextFile(sessionId: string, path: string, content: string): Promise<void> {
    await this.client()
      .request('fs/write_text_file', { sessionId, path, content })
      .catch((error: unknown) => {
        throw editorFailure('fs/write_text_file', error)
      })
  }

  /** Starts a command in a terminal of the editor. */
  createTerminal(params: CreateTerminalRequest): Promise<TerminalHandle> {
    return this.client()
      .createTerminal(params)
      .catch((error: unknown) => {
        throw editorFailure('terminal/create', error)
      })
  }

  /** Shows a terminal as the output of a tool call (before the terminal is released). */
  async showTerminal(scope: ToolScope, terminalId: string): Promise<void> {
    const session = this.sessions.get(scope.sessionId)
    if (!session) return
    session.send([session.translator.attachTerminal(scope.callId, terminalId)])
    await session.flush()
  }

  /** Takes a dsh agent into this connection (or the one already there). */
  adopt(agent: Agent): AcpSession {
    const existing = this.sessions.get(agent.session.id)
    if (existing) return existing
    const session = new AcpSession(
      agent,
      this.client(),
      {
        describe: (name, args) => ({ kind: kindOf(name, args, this.config.toolKinds), title: this.titleOf(agent, name, args) }),
        diffMaxBytes: this.config.diffMaxBytes,
        ...this.checkpointReader(agent),
        editorFiles: () => this.canReadFiles,
        toolOutputMaxChars: this.config.toolOutputMaxChars,
        notices: !!this.clientCapabilities?.session?.notices,
        currentMode: () => modeState(this.presets, agent.session, this.ctx.get('planMode'))?.currentModeId,
        ...(this.ctx.get('usagePrices') ? { prices: () => this.ctx.get('usagePrices')!.table() } : {}),
      },
      (error) => this.ctx.logger('acp').warn('an update could not be sent: %s', (error as Error)?.message ?? error),
      (turnAgent) => turnChangesSummary(this.ctx, turnAgent, !!this.clientCapabilities?.session?.notices),
    )
    this.sessions.set(session.id, session)
    return session
  }

  /** Stored file contents of the session's checkpoints, when the row is mounted (whole-file diffs from the log). */
  private checkpointReader(agent: Agent): { checkpointText?(sha256: string): string | undefined } {
    const checkpoints = this.ctx.get('checkpoints') as Checkpoints | undefined
    if (!checkpoints) return {}
    const store = checkpoints.store(agent.session.header)
    const decoder = new TextDecoder('utf-8', { fatal: true })
    return {
      checkpointText: (sha256) => {
        try {
          const data = store.getSync(sha256)
          return data ? decoder.decode(data) : undefined
        } catch (error) {
          this.ctx.logger('acp').warn('checkpoint %s: not shown as text: %s', sha256, (error as Error)?.message ?? error)
          return undefined
        }
      },
    }
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId)
  }

  session(sessionId: string): AcpSession {
    const session = this.sessions.get(sessionId)
    if (!session) throw new AcpError('SESSION_UNKNOWN', `no session ${sessionId} on this connection (create it with session/new or open it with session/load)`, { sessionId })
    return session
  }

  private client() {
    if (!this.connection) throw new AcpError('SESSION_UNAVAILABLE', 'the editor connection is closed')
    return this.connection.client
  }

  private titleOf(agent: Agent, name: string, args: unknown): string {
    try {
      return this.ctx.tools.resolve(name, agent.id)?.tool.summarize?.(args) ?? name
    } catch {
      return name
    }
  }

  private connect(stream: Stream): void {
    const app: AgentApp = agentApp({ name: 'dsh' })
    registerMethods(app, this, this.ctx)
    const connection = app.connect(stream)
    this.connection = connection
    void connection.closed.then(() => {
      if (this.connection !== connection) return
      this.connection = undefined
      // The editor went away: the launch is over (the launcher drains the tree).
      this.ctx.app.requestExit(0)
    })
  }

  private async askPermission(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const session = this.sessions.get(request.sessionId)
    // Not an editor session: nobody on this connection can answer for it.
    if (!session || !this.connection) return 'reject'
    await session.flush()
    const toolCall = session.translator.permissionView(request.callId ?? request.requestId, request.summary, request.reason)
    const response = await this.connection.client.request(
      'session/request_permission',
      {
        sessionId: session.id,
        toolCall,
        options: permissionOptions(request, this.ctx.approval.canGrant(request)),
      },
      { cancellationSignal: signal },
    )
    const chosen = response.outcome.outcome === 'selected' ? response.outcome.optionId : undefined
    return ANSWERS_BY_OPTION[chosen ?? ''] ?? 'reject'
  }
}

/** Option ids are the dsh answers themselves; anything else (or a cancel) is a rejection. */
const ANSWERS_BY_OPTION: Record<string, ApprovalAnswer> = { allow_once: 'allow_once', allow_session: 'allow_session', allow_always: 'allow_always', reject_once: 'reject' }

/**
 * Allow once and Reject always; with a rule to keep, also "for this session" and "always in this workspace".
 * ACP has no session-long kind, so both standing answers are `allow_always` options, told apart by name.
 */
function permissionOptions(request: ApprovalRequest, canGrant: boolean): PermissionOption[] {
  const grants: PermissionOption[] = canGrant
    ? [
        { optionId: 'allow_session', name: `Allow ${request.rule} for this session`, kind: 'allow_always' },
        { optionId: 'allow_always', name: `Always allow ${request.rule} in this workspace`, kind: 'allow_always' },
      ]
    : []
  return [{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' }, ...grants, { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' }]
}
