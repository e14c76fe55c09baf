import { PeerRequestError, RequestTooLargeError, RpcError, RpcPeer } from '@dsh/jsonrpc-lines'
import {
  RPC_ERRORS,
  SERVER_REQUEST_SCHEMAS,
  checkValue,
  type ClientMethod,
  type ClientMethods,
  type ServerNotifications,
  type ServerRequests,
} from '@dsh/sdk-protocol'
import { DshError } from './errors.ts'
import type { RuntimeProcess } from './process.ts'

type NotificationListener = <M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]) => void
type ServerRequestHandler = <M extends keyof ServerRequests>(
  method: M,
  params: ServerRequests[M]['params'],
) => Promise<ServerRequests[M]['result']>

/**
 * The client end of the protocol over the runtime's stdio: our requests and their replies, the runtime's
 * notifications and requests. The JSON-RPC handling is the one the runtime uses (`@dsh/jsonrpc-lines`).
 */
export class Connection {
  private readonly peer: RpcPeer
  private readonly listeners = new Set<NotificationListener>()
  private readonly closeListeners = new Set<(error: DshError) => void>()
  private failure: DshError | undefined
  private ended!: (error: DshError) => void
  /** Settles with the reason once the connection ends (the runtime exited or the harness closed). */
  readonly whenClosed = new Promise<DshError>((resolve) => (this.ended = resolve))

  constructor(
    private readonly process: RuntimeProcess,
    private readonly serve: ServerRequestHandler,
  ) {
    this.peer = new RpcPeer({
      write: (line) => process.write(line),
      handle: (method, params, notification) =>
        notification ? this.notified(method, params) : this.answer(method, params),
      excerptChars: process.excerptChars,
      warn: (message) => process.warn(message),
    })
    process.onLine((line) => this.peer.receive(line))
    process.onUnreadable((problem) =>
      this.fail(new DshError('PROTOCOL_ERROR', `the dsh runtime wrote ${problem}; the connection is closed`)),
    )
    void process.exited.then((exit) => this.fail(new DshError('RUNTIME_EXITED', process.describeExit(exit))))
  }

  /** Why the connection ended, once it has. */
  get closed(): DshError | undefined {
    return this.failure
  }

  async request<M extends ClientMethod>(
    method: M,
    params: ClientMethods[M]['params'],
  ): Promise<ClientMethods[M]['result']> {
    if (this.failure) throw this.failure
    try {
      return (await this.peer.request(method, params)) as ClientMethods[M]['result']
    } catch (error) {
      if (error instanceof RequestTooLargeError) throw new DshError('REQUEST_TOO_LARGE', error.message)
      if (error instanceof PeerRequestError && error.error) {
        const rpc = error.error
        throw new DshError(
          'REQUEST_FAILED',
          `${method} failed (${rpc.code}${rpc.data?.code ? ` ${rpc.data.code}` : ''}): ${rpc.message}`,
          rpc,
        )
      }
      throw error
    }
  }

  /** The runtime's line limit (from `initialize`): longer requests fail at once with REQUEST_TOO_LARGE. */
  setMaxRequestBytes(bytes: number): void {
    this.peer.setMaxRequestBytes(bytes)
  }

  /** Listens to every notification; returns the function that stops listening. */
  listen(listener: NotificationListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Calls `listener` once the connection ends (at once if it has); returns the function that stops listening. */
  onClose(listener: (error: DshError) => void): () => void {
    if (this.failure) {
      listener(this.failure)
      return () => {}
    }
    this.closeListeners.add(listener)
    return () => this.closeListeners.delete(listener)
  }

  fail(error: DshError): void {
    if (this.failure) return
    this.failure = error
    this.ended(error)
    this.peer.rejectPending(error)
    for (const listener of this.closeListeners) listener(error)
    this.closeListeners.clear()
  }

  private async notified(method: string, params: Record<string, unknown>): Promise<void> {
    for (const listener of this.listeners) listener(method as keyof ServerNotifications, params as any)
  }

  /** A request of the runtime: only approvals are served, and only with an answer the protocol allows. */
  private async answer(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!(method in SERVER_REQUEST_SCHEMAS))
      throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `the SDK does not serve "${method}"`, { method })
    const schemas = SERVER_REQUEST_SCHEMAS[method as keyof ServerRequests]
    const problem = checkValue(schemas.params, params)
    if (problem)
      throw new RpcError(
        RPC_ERRORS.INVALID_PARAMS,
        `Invalid params: "${problem.field || 'params'}" ${problem.problem}`,
        { field: problem.field || 'params' },
      )
    return this.serve(method as keyof ServerRequests, params as ServerRequests[keyof ServerRequests]['params'])
  }
}
