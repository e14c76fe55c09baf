import type {
  AgentConnection,
  AgentContext,
  ClientCapabilities,
  CreateTerminalRequest,
  PermissionOption,
  TerminalHandle,
  ToolKind,
} from '@agentclientprotocol/sdk'
import type { Agent } from '@dsh/agent'
import type { ApprovalAnswer, ApprovalRequest } from '@dsh/approval'
import type {} from '@dsh/attachment'
import type { Checkpoints } from '@dsh/checkpoints'
import type { Context } from '@dsh/cordis'
import type { Route } from '@dsh/llm'
import { AcpSession } from './acp-session.ts'
import type { StoredImageReader } from './stored-images.ts'
import { AcpError, editorFailure } from './errors.ts'
import { modelCatalog, modeState, type ModelCatalog, type PresetSource } from './options.ts'
import { kindOf } from './tool-calls.ts'
import { turnChangesSummary } from './turn-changes.ts'

/** What a connection is configured with (the `acp` service's config, docs/architecture.md, "Surfaces"). */
export interface Config {
  toolKinds: Record<string, ToolKind>
  authKeys: Record<string, string>
  listPageSize: number
  diffMaxBytes: number
  toolOutputMaxChars: number
}

/** The refusal of a call to the editor once the connection is closed (or before it opened). */
export const connectionClosed = () => new AcpError('SESSION_UNAVAILABLE', 'the editor connection is closed')

/**
 * One ACP connection: what the editor said it can do, the model catalog it was offered, and its sessions
 * (each a dsh agent). The `acp` service builds it and registers the methods (methods.ts) over it; the
 * methods call it, the service delegates the providers' calls to it, and it calls neither back: calls go
 * one way, service → methods → connection → sessions (docs/architecture.md, "Surfaces").
 */
export class AcpConnection {
  readonly sessions = new Map<string, AcpSession>()
  /** What the client said it can do in `initialize`. */
  clientCapabilities: ClientCapabilities | undefined
  /** The models offered, by provider. */
  private models: ModelCatalog
  private sdk: AgentConnection | undefined

  constructor(
    readonly ctx: Context,
    readonly config: Config,
  ) {
    this.models = modelCatalog(ctx, config.authKeys)
  }

  get catalog(): ModelCatalog {
    return this.models
  }

  /** After `authenticate`: a provider that had no key offered no models, so ask again. */
  refreshCatalog(): void {
    this.models = modelCatalog(this.ctx, this.config.authKeys)
  }

  /** Binds the SDK's connection; resolves true when the editor closed it, false when we did (`close()`). */
  attach(sdk: AgentConnection): Promise<boolean> {
    this.sdk = sdk
    return sdk.closed.then(() => {
      if (this.sdk !== sdk) return false
      this.sdk = undefined
      return true
    })
  }

  /** Our own teardown (the tree stops): the sessions stay, every later call to the editor is refused. */
  close(): void {
    const sdk = this.sdk
    this.sdk = undefined
    sdk?.close()
  }

  get open(): boolean {
    return !!this.sdk
  }

  /** The permission presets, when a row mounts them (modes are offered only then). */
  get presets(): PresetSource | undefined {
    return this.ctx.get('permissionPresets')
  }

  /** The route a new session starts on (the user's settings, else the `agents` row's route). */
  defaultRoute(): Route {
    return this.ctx.agents.defaultRoute()
  }

  get canReadFiles(): boolean {
    return this.open && !!this.clientCapabilities?.fs?.readTextFile
  }

  get canWriteFiles(): boolean {
    return this.open && !!this.clientCapabilities?.fs?.writeTextFile
  }

  get hasTerminal(): boolean {
    return this.open && !!this.clientCapabilities?.terminal
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

  /** Shows a terminal as the output of a tool call of an editor session (before the terminal is released). */
  async showTerminal(sessionId: string, callId: string, terminalId: string): Promise<void> {
    const session = this.sessions.get(sessionId)
    if (!session) return
    session.send([session.translator.attachTerminal(callId, terminalId)])
    await session.flush()
  }

  /** Takes a dsh agent into this connection (or the one already there). */
  adopt(agent: Agent): AcpSession {
    const existing = this.sessions.get(agent.session.id)
    if (existing) return existing
    const notices = () => !!this.clientCapabilities?.session?.notices
    const session = new AcpSession(
      agent,
      this.client(),
      {
        describe: (name, args) => ({
          kind: kindOf(name, args, this.config.toolKinds),
          title: this.titleOf(agent, name, args),
        }),
        diffMaxBytes: this.config.diffMaxBytes,
        ...this.checkpointReader(agent),
        editorFiles: () => this.canReadFiles,
        toolOutputMaxChars: this.config.toolOutputMaxChars,
        notices: notices(),
        currentMode: () => modeState(this.presets, agent.session, this.ctx.get('planMode'))?.currentModeId,
        ...(this.ctx.get('usagePrices') ? { prices: () => this.ctx.get('usagePrices')!.table() } : {}),
      },
      (error) => this.ctx.logger('acp').warn('an update could not be sent: %s', (error as Error)?.message ?? error),
      (turnAgent) => turnChangesSummary(this.ctx, turnAgent, notices()),
      this.imageReader(agent),
    )
    this.sessions.set(session.id, session)
    return session
  }

  /** A session of this connection, or `SESSION_UNKNOWN` naming how to get one. */
  session(sessionId: string): AcpSession {
    const session = this.sessions.get(sessionId)
    if (!session)
      throw new AcpError(
        'SESSION_UNKNOWN',
        `no session ${sessionId} on this connection (create it with session/new or open it with session/load)`,
        { sessionId },
      )
    return session
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId)
  }

  /** Asks the editor to answer an approval of one of its sessions; any other request is rejected. */
  async askPermission(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const session = this.sessions.get(request.sessionId)
    // Not an editor session: nobody on this connection can answer for it.
    if (!session || !this.sdk) return 'reject'
    await session.flush()
    const toolCall = session.translator.permissionView(
      request.callId ?? request.requestId,
      request.summary,
      request.reason,
    )
    const response = await this.client().request(
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

  /** A tool result's images from the session's attachment store, when the row is mounted. */
  private imageReader(agent: Agent): StoredImageReader | undefined {
    const attachments = this.ctx.get('attachments')
    if (!attachments) return undefined
    return async (sha256) => {
      const { data, image } = await attachments.load(agent.session, sha256)
      return { data: Buffer.from(data).toString('base64'), mimeType: image.mediaType }
    }
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
          this.ctx
            .logger('acp')
            .warn('checkpoint %s: not shown as text: %s', sha256, (error as Error)?.message ?? error)
          return undefined
        }
      },
    }
  }

  private client(): AgentContext {
    if (!this.sdk) throw connectionClosed()
    return this.sdk.client
  }

  private titleOf(agent: Agent, name: string, args: unknown): string {
    try {
      return this.ctx.tools.resolve(name, agent.id)?.tool.summarize?.(args) ?? name
    } catch {
      return name
    }
  }
}

/** Option ids are the dsh answers themselves; anything else (or a cancel) is a rejection. */
const ANSWERS_BY_OPTION: Record<string, ApprovalAnswer> = {
  allow_once: 'allow_once',
  allow_session: 'allow_session',
  allow_always: 'allow_always',
  reject_once: 'reject',
}

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
  return [
    { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
    ...grants,
    { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  ]
}
