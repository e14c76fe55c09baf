import type { Context } from '@dsh/cordis'
import { LineSplitter, RpcPeer } from '@dsh/jsonrpc-lines'
import type { Agent, AgentStatus } from '@dsh/agent'
import type { ApprovalReply, ApprovalRequest } from '@dsh/approval'
import {
  APPROVAL_ANSWERS,
  CLIENT_METHOD_SCHEMAS,
  CLIENT_METHODS,
  PROTOCOL_VERSION,
  RPC_ERRORS,
  SERVER_REQUEST_SCHEMAS,
  checkValue,
  type ApprovalRequestParams,
  type ClientMethod,
  type ClientMethods,
  type ServerNotifications,
  type ServerRequests,
} from '@dsh/sdk-protocol'
import type { Session, SessionEvent } from '@dsh/session'
import type { Config } from './config.ts'
import { RpcError, invalidParams, toRpcError } from './errors.ts'
import { METHOD_NOT_FOUND, Methods, type MethodHost } from './methods.ts'
import { withoutUnknownFields } from './params.ts'
import type { AskClient } from './client-tools.ts'

export interface Stdio {
  input: NodeJS.ReadableStream
  output: NodeJS.WritableStream
}

type State = 'uninitialized' | 'initializing' | 'ready' | 'closing'

/**
 * The SDK runtime's connection (docs/architecture.md, "Surfaces"): reads requests from stdin, writes
 * replies and notifications to stdout, asks the client for approvals, and ends the launch on `shutdown` or
 * EOF once every running turn has stopped and every log is flushed.
 */
export class SdkServer implements MethodHost {
  private state: State = 'uninitialized'
  private readonly peer: RpcPeer
  private readonly methods: Methods
  private readonly log
  private outputOpen = true
  private drained: Promise<void> | undefined
  private exitRequested = false
  private answering = false
  private writeLine: (line: string) => void = () => {}

  constructor(
    readonly ctx: Context,
    readonly config: Config,
    private readonly io: Stdio,
  ) {
    this.log = ctx.logger('sdk')
    this.methods = new Methods(this)
    this.peer = new RpcPeer({
      write: (line) => this.writeLine(line),
      handle: (method, params) => this.handle(method, params),
      excerptChars: config.excerptChars,
      warn: (message) => this.log.warn(message),
      idPrefix: 'dsh-',
      toError: toRpcError,
    })
  }

  /** Starts serving; the returned function stops (the plugin's effect). */
  start(): () => void {
    const { input, output } = this.io
    const stdout = this.claimStdout()
    this.writeLine = (line) => {
      if (this.outputOpen) stdout.write(line + '\n')
    }
    const splitter = new LineSplitter(this.config.maxLineBytes, this.config.excerptChars, {
      line: (text) => this.peer.receive(text),
      tooLong: (start, limit) =>
        this.writeLine(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: new RpcError(
              RPC_ERRORS.INVALID_REQUEST,
              `Invalid request: the line is longer than ${limit} bytes (maxLineBytes); it was dropped`,
              {
                code: 'LINE_TOO_LONG',
                lineStart: start,
              },
            ).toObject(),
          }),
        ),
    })
    const onData = (chunk: Buffer | string) => splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    const onEnd = () => {
      splitter.end()
      this.log.debug('stdin ended: shutting down')
      void this.drain().then(() => this.exit())
    }
    const onInputError = (error: Error) => {
      this.log.warn(`stdin failed (${error.message}): shutting down`)
      onEnd()
    }
    const onOutputError = (error: Error) => {
      // The client is gone (EPIPE): nobody reads replies any more, so stop as if stdin had ended.
      this.outputOpen = false
      this.log.warn(`stdout failed (${error.message}): shutting down`)
      void this.drain().then(() => this.exit())
    }
    const offEvent = this.ctx.on('session/event', (session: Session, event: SessionEvent) =>
      this.notify('session.event', { sessionId: session.id, event: event as any }),
    )
    const offStatus = this.ctx.on('agent/status', (agent: Agent, status: AgentStatus) => {
      if (status !== 'disposed') this.notify('session.status', { sessionId: agent.session.id, status })
    })
    input.on('data', onData)
    input.once('end', onEnd)
    input.on('error', onInputError)
    output.on('error', onOutputError)
    input.resume()
    return () => {
      offEvent()
      offStatus()
      input.off('data', onData)
      input.off('end', onEnd)
      input.off('error', onInputError)
      output.off('error', onOutputError)
      // A paused stdin no longer holds the event loop, so the process can end after the tree is disposed.
      input.pause()
      this.peer.rejectPending('the SDK server stopped')
      stdout.restore()
    }
  }

  readonly callClient: AskClient = (method, params, signal) => this.peer.request(method, params, signal)

  initialized(approvals: boolean): void {
    if (this.state === 'initializing') this.state = 'ready'
    if (approvals && !this.answering) {
      this.answering = true
      this.ctx.approval.answerer(this.ctx, (request, signal) => this.askClient(request, signal), {
        actor: 'client:sdk',
      })
    }
  }

  /** Stops taking work, cancels every running turn, waits (bounded) for them to end and flushes their logs. */
  drain(): Promise<void> {
    return (this.drained ??= (async () => {
      this.state = 'closing'
      this.peer.rejectPending('the runtime is shutting down')
      const agents = this.ctx.agents.list()
      for (const agent of agents) agent.cancel('the SDK runtime is shutting down')
      const settled = Promise.all(
        agents.map(async (agent) => {
          await agent.whenIdle()
          await agent.session.flush()
        }),
      ).then(() => true)
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<false>(
        (resolve) => (timer = setTimeout(() => resolve(false), this.config.shutdownGraceMs)),
      )
      const finished = await Promise.race([settled, grace]).finally(() => clearTimeout(timer))
      if (!finished)
        this.log.warn(
          `turns still running ${this.config.shutdownGraceMs} ms after cancel (shutdownGraceMs): exiting anyway`,
        )
    })())
  }

  private async handle(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!(CLIENT_METHODS as readonly string[]).includes(method)) throw METHOD_NOT_FOUND(method)
    if (this.state === 'closing' && method !== 'shutdown')
      throw new RpcError(
        RPC_ERRORS.SHUTTING_DOWN,
        `the runtime is shutting down and takes no new requests (${method})`,
        { code: 'SHUTTING_DOWN' },
      )
    if (method === 'initialize') {
      if (this.state !== 'uninitialized')
        throw new RpcError(
          RPC_ERRORS.INVALID_REQUEST,
          'Invalid request: initialize was already called on this connection',
          { code: 'ALREADY_INITIALIZED' },
        )
      // Version skew: a newer client may send optional fields this runtime does not know. The handshake
      // negotiates by `protocolVersion` (the reply names ours), so they are left out and named in a
      // warning, as LSP, MCP and ACP peers do; every other method stays strict.
      const known = withoutUnknownFields(CLIENT_METHOD_SCHEMAS.initialize.params, params)
      if (known.ignored.length)
        this.log.warn(
          `initialize: ignored the fields this runtime (protocol ${PROTOCOL_VERSION}) does not know: ${known.ignored.join(', ')}`,
        )
      checkParams(method, known.value)
      this.state = 'initializing'
      try {
        return await this.methods.initialize(known.value as ClientMethods['initialize']['params'])
      } catch (error) {
        if (this.state === 'initializing') this.state = 'uninitialized'
        throw error
      }
    }
    if (this.state !== 'ready' && method !== 'shutdown')
      throw new RpcError(RPC_ERRORS.NOT_INITIALIZED, `call initialize before ${method}`, { code: 'NOT_INITIALIZED' })
    checkParams(method as ClientMethod, params)
    const run = this.methods[method as Exclude<ClientMethod, 'initialize'>] as (
      this: Methods,
      params: Record<string, unknown>,
    ) => Promise<unknown>
    const result = await run.call(this.methods, params)
    // The reply is written once this promise settles (a microtask); the exit request comes after it.
    if (method === 'shutdown') setImmediate(() => this.exit())
    return result
  }

  private notify<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void {
    this.peer.notify(method, params)
  }

  /** Asks the client; a missing or malformed answer, a timeout or a cancelled turn all end in a rejection. */
  private async askClient(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalReply> {
    const controller = new AbortController()
    const onAbort = () => controller.abort(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    const limit = this.config.approvalTimeoutMs
    const timer =
      limit > 0
        ? setTimeout(
            () =>
              controller.abort(
                new Error(`the SDK client did not answer approval/request within ${limit} ms (approvalTimeoutMs)`),
              ),
            limit,
          )
        : undefined
    const params: ApprovalRequestParams = {
      requestId: request.requestId,
      sessionId: request.sessionId,
      tool: request.tool,
      summary: request.summary,
      reason: request.reason,
      ...(request.callId ? { callId: request.callId } : {}),
      ...(request.rule ? { rule: request.rule } : {}),
      ...(request.arguments ? { arguments: request.arguments } : {}),
    }
    try {
      const result = await this.peer.request('approval/request', params, controller.signal)
      const problem = checkValue(SERVER_REQUEST_SCHEMAS['approval/request'].result, result)
      if (problem)
        throw new Error(
          `the SDK client answered approval/request with ${JSON.stringify(result)}: ${problem.field || 'the result'} ${problem.problem} (expected { "answer": ${APPROVAL_ANSWERS.map((answer) => `"${answer}"`).join(' | ')} })`,
        )
      return result as ServerRequests['approval/request']['result']
    } finally {
      if (timer) clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
    }
  }

  private exit(): void {
    if (this.exitRequested) return
    this.exitRequested = true
    this.ctx.app.requestExit(0)
  }

  /**
   * Takes stdout for the protocol: our writes go to the real stream, anything else written to
   * `process.stdout` (a plugin's stray console.log) is sent to stderr instead of corrupting the protocol.
   */
  private claimStdout(): { write(text: string): void; restore(): void } {
    const output = this.io.output
    const write = output.write.bind(output) as (text: string) => boolean
    if (!this.config.guardStdout || output !== process.stdout) return { write, restore() {} }
    const own = Object.getOwnPropertyDescriptor(process.stdout, 'write')
    process.stdout.write = ((chunk: any, ...rest: any[]) =>
      process.stderr.write(chunk, ...rest)) as typeof process.stdout.write
    return {
      write,
      restore() {
        if (own) Object.defineProperty(process.stdout, 'write', own)
        else delete (process.stdout as any).write
      },
    }
  }
}

/** Refuses params that do not match the method's schema, naming the field (`content[1].text`). */
function checkParams(method: ClientMethod, params: Record<string, unknown>): void {
  const problem = checkValue(CLIENT_METHOD_SCHEMAS[method].params, params)
  if (problem) throw invalidParams(problem.field || 'params', problem.problem)
}
