import {
  APPROVAL_ANSWERS,
  PROTOCOL_VERSION,
  type ApprovalAnswer,
  type ApprovalRequestParams,
  type ApprovalResult,
  type ClientMethod,
  type ClientMethods,
  type InitializeResult,
  type ServerNotifications,
  type SearchHit,
  type SessionEventsResult,
  type SessionNewParams,
  type SessionSummary,
  type ToolCallParams,
  type ToolCallResult,
} from '@dsh/sdk-protocol'
import { Connection } from './connection.ts'
import { DshError } from './errors.ts'
import { findRuntime } from './find.ts'
import { CLOSE_DEFAULTS, RuntimeProcess, type CloseStage, type CloseTimeouts, type Exit } from './process.ts'
import { Session } from './session.ts'

/**
 * Answers one approval, given the structured call (`tool`, `arguments`, `reason`, the offered `rule`):
 * `allow_once` (or true) lets the call run; `allow_session` / `allow_always` let it run and keep the request's
 * `rule` for the session / the workspace; `{ answer: 'reject', message }` refuses it and the model reads the
 * message; `{ answer: 'allow_once', arguments }` runs the call with those arguments instead (validated again
 * and logged as `tool/edited`); anything else refuses it.
 */
export type ApprovalCallback = (
  request: ApprovalRequestParams,
) => ApprovalAnswer | boolean | ApprovalResult | Promise<ApprovalAnswer | boolean | ApprovalResult>

/** A tool the program implements: the model's calls (arguments valid against `parameters`) come to `handler`. */
export interface ClientToolSpec {
  name: string
  description: string
  /** JSON Schema of the arguments (`type: "object"`). */
  parameters: Record<string, unknown>
  /** Every call is an approval request first. */
  approval?: boolean
  /** What the model reads: text, blocks, or `{ content, isError: true }`. A throw is a TOOL_FAILED result carrying its message. */
  handler: (
    args: Record<string, unknown>,
    call: ToolCallParams,
  ) => string | ToolCallResult | Promise<string | ToolCallResult>
}

export interface HarnessOptions {
  /** The runtime to launch, as `[program, ...args]`; default: `dsh` on PATH, else this checkout's launcher. */
  command?: string[]
  /** The runtime's working directory (the default cwd of its sessions). */
  cwd?: string
  /** Environment added to this process's for the runtime (keys, `DSH_HOME`, `DSH_SYSTEM_PROMPT`, …). */
  env?: Record<string, string | undefined>
  /** The minimal composition: exactly `bash` and `str_replace_editor` (`--patch minimal`). */
  minimal?: boolean
  /** More `--patch` layers (files, or names of patches a bundle ships). */
  patches?: string[]
  /** Default model of new sessions (`provider/model` or a bare model); default: `$DSH_MODEL`. */
  model?: string
  /** Answers approvals of every session without its own callback. Without one, approvals are refused. */
  onApproval?: ApprovalCallback
  /** The runtime's stderr: kept (the default, quoted in errors), passed through, or handed to a function. */
  stderr?: 'pipe' | 'inherit' | ((text: string) => void)
  /** Bytes of the runtime's stderr kept for error messages (default 16384). */
  stderrTailBytes?: number
  /** Longest line (one message) read from the runtime, in bytes (default 256 MiB); a longer one ends the connection. */
  maxLineBytes?: number
  /** Timeouts of each step of `close()`. */
  closeTimeouts?: Partial<CloseTimeouts>
  clientInfo?: { name: string; version?: string }
}

export interface SessionOptions {
  /** Absolute directory the session works in (default: the runtime's cwd). */
  cwd?: string
  /** `provider/model` or a bare model; default: the harness's `model`, else `$DSH_MODEL`, else the runtime's default. */
  model?: string
  /** Permission preset (`read-only`, `workspace-write`, `danger-full-access`). */
  permission?: string
  /** Agent preset (`standard`, `explore`, `minimal`, a `$DSH_HOME/presets/<name>.yaml`): the tools the session is offered. */
  agentPreset?: string
  /** Start in plan mode (only reading runs until the plan is approved). */
  planMode?: boolean
  /** A whole system prompt instead of the assembled one. */
  systemPrompt?: string
  /** MCP servers (stdio) for this session, by name; their tools are `mcp__<name>__<tool>`. */
  mcpServers?: SessionNewParams['mcpServers']
  /** Tools this program implements for the session (a name the session already has is refused). */
  tools?: ClientToolSpec[]
  /** Only these tools are offered and run (logged; a run may set another filter). */
  allowedTools?: string[]
  /** These tools are neither offered nor run. */
  disallowedTools?: string[]
  onApproval?: ApprovalCallback
}

export interface CloseResult extends Exit {
  /** Which step ended the runtime. */
  stage: CloseStage
}

const STDERR_TAIL_BYTES = 16_384

/**
 * A running dsh runtime (`dsh --profile sdk`) and the client end of its protocol. Start it with
 * `Harness.start()`, open sessions, and `close()` it when done.
 */
export class Harness {
  private readonly sessions = new Map<string, Session>()
  private closing: Promise<CloseResult> | undefined

  private constructor(
    private readonly runtime: RuntimeProcess,
    private readonly connection: Connection,
    private readonly options: HarnessOptions,
    private readonly defaultModel: string | undefined,
    /** What the runtime said about itself: version, capabilities, providers and models. */
    readonly info: InitializeResult,
  ) {}

  /** Finds and launches the runtime, then initializes the protocol. */
  static async start(options: HarnessOptions = {}): Promise<Harness> {
    const env: NodeJS.ProcessEnv = { ...process.env, ...options.env }
    const command = findRuntime(options.command, env)
    const args = [
      '--profile',
      'sdk',
      ...(options.minimal ? ['--patch', 'minimal'] : []),
      ...(options.patches ?? []).flatMap((patch) => ['--patch', patch]),
    ]
    const runtime = await RuntimeProcess.spawn(command, args, {
      cwd: options.cwd,
      env,
      stderr: options.stderr ?? 'pipe',
      stderrTailBytes: options.stderrTailBytes ?? STDERR_TAIL_BYTES,
      ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
    })
    let harness: Harness | undefined
    const connection = new Connection(
      runtime,
      async (method, params) =>
        (method === 'tool/call'
          ? harness!.callTool(params as ToolCallParams)
          : harness!.approve(params as ApprovalRequestParams)) as any,
    )
    try {
      const info = await connection.request('initialize', {
        protocolVersion: PROTOCOL_VERSION,
        clientInfo: options.clientInfo ?? { name: '@dsh/sdk' },
        // Always able to answer: a session or the harness may set a callback later; without one we refuse.
        capabilities: { approvals: true },
      })
      if (info.protocolVersion !== PROTOCOL_VERSION)
        throw new DshError(
          'PROTOCOL_MISMATCH',
          `the dsh runtime speaks protocol ${info.protocolVersion}, this SDK speaks ${PROTOCOL_VERSION}`,
        )
      connection.setMaxRequestBytes(info.limits.maxLineBytes)
      harness = new Harness(runtime, connection, options, options.model ?? env.DSH_MODEL ?? undefined, info)
      return harness
    } catch (error) {
      await runtime.close(() => runtime.write(JSON.stringify({ jsonrpc: '2.0', id: 'shutdown', method: 'shutdown' })), {
        ...CLOSE_DEFAULTS,
        ...options.closeTimeouts,
      })
      throw error
    }
  }

  /** The runtime's process id. */
  get pid(): number | undefined {
    return this.runtime.child.pid
  }

  /** Opens a new session. */
  async session(options: SessionOptions = {}): Promise<Session> {
    const model = options.model ?? this.defaultModel
    const { sessionId } = await this.request('session/new', {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(model ? { route: model } : {}),
      ...(options.permission ? { permission: options.permission } : {}),
      ...(options.agentPreset ? { agentPreset: options.agentPreset } : {}),
      ...(options.planMode ? { planMode: true } : {}),
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
      ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
      ...(options.tools?.length ? { tools: options.tools.map(({ handler: _handler, ...declared }) => declared) } : {}),
      ...(options.allowedTools ? { allowedTools: options.allowedTools } : {}),
      ...(options.disallowedTools ? { disallowedTools: options.disallowedTools } : {}),
    })
    const session = this.adopt(sessionId, options.onApproval)
    for (const tool of options.tools ?? []) session.tools.set(tool.name, tool)
    return session
  }

  /** Continues a stored session (repaired if its runtime crashed). */
  async resume(sessionId: string, options: { model?: string; onApproval?: ApprovalCallback } = {}): Promise<Session> {
    const opened = await this.request('session/resume', {
      sessionId,
      ...(options.model ? { route: options.model } : {}),
    })
    return this.adopt(opened.sessionId, options.onApproval)
  }

  /** A new session holding events `0..atSeq` of another (a turn boundary). */
  async fork(
    sessionId: string,
    atSeq: number,
    options: { model?: string; onApproval?: ApprovalCallback } = {},
  ): Promise<Session> {
    const opened = await this.request('session/fork', {
      sessionId,
      atSeq,
      ...(options.model ? { route: options.model } : {}),
    })
    return this.adopt(opened.sessionId, options.onApproval)
  }

  /** A session the runtime already has open (one a `/clear` or `/fork` command started). */
  attach(sessionId: string): Session {
    return this.adopt(sessionId, undefined)
  }

  /** Stored sessions, newest first (optionally only those started in `cwd`). */
  async list(cwd?: string): Promise<SessionSummary[]> {
    return (await this.request('session/list', cwd ? { cwd } : {})).sessions
  }

  /** Stored sessions whose words match the query, best first, each at the event to open it at (`session/search`). */
  async search(query: string, options: { cwd?: string; limit?: number } = {}): Promise<SearchHit[]> {
    return (await this.request('session/search', { query, ...options })).hits
  }

  /** Names a session as its user chose (`session/rename`); a generated title never replaces it. Returns the title as logged. */
  async rename(sessionId: string, title: string): Promise<string> {
    return (await this.request('session/rename', { sessionId, title })).title
  }

  /** Deletes a stored session with its subagent children (`session/delete`); returns the ids deleted. */
  async delete(sessionId: string): Promise<string[]> {
    return (await this.request('session/delete', { sessionId })).deleted
  }

  /** One page of a stored log. */
  events(sessionId: string, page: { fromSeq?: number; limit?: number } = {}): Promise<SessionEventsResult> {
    return this.request('session/events', { sessionId, ...page })
  }

  /** Sends any protocol request (the typed methods above cover them all). */
  request<M extends ClientMethod>(method: M, params: ClientMethods[M]['params']): Promise<ClientMethods[M]['result']> {
    if (this.closing) return Promise.reject(new DshError('CLOSED', `cannot send ${method}: the harness is closed`))
    return this.connection.request(method, params)
  }

  /** Listens to every notification of the runtime; returns the function that stops listening. */
  listen(
    listener: <M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]) => void,
  ): () => void {
    return this.connection.listen(listener)
  }

  /** Settles with the reason once the runtime is gone. */
  get whenClosed(): Promise<DshError> {
    return this.connection.whenClosed
  }

  /** Calls `listener` once the runtime is gone; returns the function that stops listening. */
  onClose(listener: (error: DshError) => void): () => void {
    return this.connection.onClose(listener)
  }

  /** Ends the runtime: `shutdown` (turns cancelled, logs flushed), then EOF, SIGTERM and SIGKILL as needed. */
  close(): Promise<CloseResult> {
    return (this.closing ??= (async () => {
      const result = await this.runtime.close(() => void this.connection.request('shutdown', {}).catch(() => {}), {
        ...CLOSE_DEFAULTS,
        ...this.options.closeTimeouts,
      })
      this.connection.fail(new DshError('CLOSED', 'the harness was closed'))
      return result
    })())
  }

  private adopt(sessionId: string, onApproval: ApprovalCallback | undefined): Session {
    const session = this.sessions.get(sessionId) ?? new Session(this, sessionId)
    if (onApproval) session.onApproval = onApproval
    this.sessions.set(sessionId, session)
    return session
  }

  /** A client tool's call: the session's handler answers; a throw becomes an error reply (TOOL_FAILED in the log). */
  private async callTool(call: ToolCallParams): Promise<ToolCallResult> {
    const tool = this.sessions.get(call.sessionId)?.tools.get(call.tool)
    if (!tool) throw new Error(`this program registered no tool "${call.tool}" for session ${call.sessionId}`)
    const result = await tool.handler(call.arguments, call)
    return typeof result === 'string' ? { content: result } : result
  }

  private async approve(request: ApprovalRequestParams): Promise<ApprovalResult> {
    const callback = this.sessions.get(request.sessionId)?.onApproval ?? this.options.onApproval
    if (!callback) throw new Error('no onApproval callback is set in the SDK, so the call is refused')
    const answer = await callback(request)
    if (typeof answer === 'object' && answer !== null) return answer // the runtime checks it against the protocol (a malformed one refuses)
    return {
      answer:
        answer === true
          ? 'allow_once'
          : APPROVAL_ANSWERS.includes(answer as ApprovalAnswer)
            ? (answer as ApprovalAnswer)
            : 'reject',
    }
  }
}
