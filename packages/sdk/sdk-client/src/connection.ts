import { RPC_ERRORS, type ClientMethod, type ClientMethods, type RpcErrorObject, type ServerNotifications, type ServerRequests } from '@dsh/sdk-protocol'
import { DshError } from './errors.ts'
import type { RuntimeProcess } from './process.ts'

type NotificationListener = <M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]) => void
type ServerRequestHandler = <M extends keyof ServerRequests>(method: M, params: ServerRequests[M]['params']) => Promise<ServerRequests[M]['result']>

interface Pending {
  method: string
  resolve(result: any): void
  reject(error: DshError): void
}

/** The client end of the protocol: our requests and their replies, the runtime's notifications and requests. */
export class Connection {
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
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
    process.onLine((line) => this.receive(line))
    void process.exited.then((exit) => this.fail(new DshError('RUNTIME_EXITED', process.describeExit(exit))))
  }

  /** Why the connection ended, once it has. */
  get closed(): DshError | undefined {
    return this.failure
  }

  request<M extends ClientMethod>(method: M, params: ClientMethods[M]['params']): Promise<ClientMethods[M]['result']> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject })
      this.process.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
    })
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
    for (const pending of this.pending.values()) pending.reject(error)
    this.pending.clear()
    for (const listener of this.closeListeners) listener(error)
    this.closeListeners.clear()
  }

  private receive(line: string): void {
    let message: any
    try {
      message = JSON.parse(line)
    } catch {
      return // the runtime writes protocol only; a stray line is not ours to interpret
    }
    if (typeof message?.method === 'string' && message.id !== undefined) return void this.answer(message.id, message.method, message.params)
    if (typeof message?.method === 'string') {
      for (const listener of this.listeners) listener(message.method, message.params)
      return
    }
    const pending = this.pending.get(message?.id)
    if (!pending) return
    this.pending.delete(message.id)
    if (message.error) {
      const error = message.error as RpcErrorObject
      pending.reject(new DshError('REQUEST_FAILED', `${pending.method} failed (${error.code}${error.data?.code ? ` ${error.data.code}` : ''}): ${error.message}`, error))
    } else pending.resolve(message.result)
  }

  private async answer(id: unknown, method: string, params: unknown): Promise<void> {
    let reply: object
    try {
      if (method !== 'approval/request') throw Object.assign(new Error(`the SDK does not serve "${method}"`), { rpcCode: RPC_ERRORS.METHOD_NOT_FOUND })
      reply = { result: await this.serve(method, params as any) }
    } catch (error: any) {
      reply = { error: { code: error?.rpcCode ?? RPC_ERRORS.INTERNAL_ERROR, message: String(error?.message ?? error) } }
    }
    this.process.write(JSON.stringify({ jsonrpc: '2.0', id, ...reply }))
  }
}
