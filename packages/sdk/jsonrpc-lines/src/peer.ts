import { RPC_ERRORS, type RpcErrorObject, type RpcId } from '@dsh/sdk-protocol'
import { RpcError } from './error.ts'

export interface PeerOptions {
  /** Writes one serialized message (without its newline). */
  write(line: string): void
  /** Runs a method. `notification` is true when the client expects no reply. */
  handle(method: string, params: Record<string, unknown>, notification: boolean): Promise<unknown>
  /** Characters of an offending line quoted in an error. */
  excerptChars: number
  /** Where problems nobody can be told about go (stderr). */
  warn(message: string): void
  /** Ids of our own requests are this prefix and a counter (`dsh-1`); without one they are plain numbers. */
  idPrefix?: string
  /** Maps what a handler threw to the error reply (default: an RpcError as it is, anything else INTERNAL_ERROR). */
  toError?(thrown: unknown): RpcError
}

/** A request of ours was not sent: serialized, it is longer than the other end reads (`setMaxRequestBytes`). */
export class RequestTooLargeError extends Error {
  override name = 'RequestTooLargeError'
  constructor(
    readonly method: string,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(
      `${method}: the request is ${bytes} bytes, over the ${limitBytes}-byte line limit of the other end; it was not sent`,
    )
  }
}

interface Pending {
  resolve(result: unknown): void
  reject(error: Error): void
}

/** The other end answered a request of ours with an error (or could not be asked). */
export class PeerRequestError extends Error {
  override name = 'PeerRequestError'
  constructor(
    message: string,
    readonly error?: RpcErrorObject,
  ) {
    super(message)
  }
}

const internalError = (thrown: unknown) =>
  thrown instanceof RpcError
    ? thrown
    : new RpcError(RPC_ERRORS.INTERNAL_ERROR, `Internal error: ${String((thrown as any)?.message ?? thrown)}`)

const isId = (value: unknown): value is RpcId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || value === null
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * One JSON-RPC 2.0 peer over lines: classifies each incoming line (request, notification, response to one
 * of our requests), answers every request exactly once, and sends our own requests and notifications.
 * Every malformed input gets an error reply; nothing it receives can throw out of `receive`.
 */
export class RpcPeer {
  private nextId = 1
  private readonly pending = new Map<string, Pending>()
  private maxRequestBytes = Infinity

  constructor(private readonly options: PeerOptions) {}

  receive(line: string): void {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch (error) {
      this.replyError(
        null,
        new RpcError(
          RPC_ERRORS.PARSE_ERROR,
          `Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`,
          { lineStart: line.slice(0, this.options.excerptChars) },
        ),
      )
      return
    }
    if (Array.isArray(message)) {
      this.replyError(
        null,
        new RpcError(
          RPC_ERRORS.INVALID_REQUEST,
          'Invalid request: batches are not supported; send one message per line',
          { code: 'BATCH_UNSUPPORTED' },
        ),
      )
      return
    }
    if (!isObject(message)) {
      this.replyError(
        null,
        new RpcError(
          RPC_ERRORS.INVALID_REQUEST,
          `Invalid request: expected a JSON object, got ${message === null ? 'null' : typeof message}`,
        ),
      )
      return
    }
    const id = 'id' in message && isId(message.id) ? message.id : null
    if (message.jsonrpc !== '2.0') {
      this.replyError(
        id,
        new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', { field: 'jsonrpc' }),
      )
      return
    }
    if ('id' in message && !isId(message.id)) {
      this.replyError(
        null,
        new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid request: "id" must be a string, a number or null', {
          field: 'id',
        }),
      )
      return
    }
    if (typeof message.method === 'string')
      return this.dispatch(message.method, message.params, 'id' in message ? id : undefined)
    if ('method' in message) {
      this.replyError(
        id,
        new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid request: "method" must be a string', { field: 'method' }),
      )
      return
    }
    if ('id' in message && ('result' in message || 'error' in message)) return this.settle(id, message)
    this.replyError(
      id,
      new RpcError(
        RPC_ERRORS.INVALID_REQUEST,
        'Invalid request: a message needs "method" (a request or notification) or "result"/"error" (a response)',
      ),
    )
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params })
  }

  /**
   * The longest request line the other end reads. A longer one is refused here, at once: the other end
   * would drop it unread and could only answer with a null id, leaving the request waiting forever.
   */
  setMaxRequestBytes(bytes: number): void {
    this.maxRequestBytes = bytes
  }

  /** Sends a request to the other end; settles with its result, its error, or `signal`'s reason. */
  request(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    const counter = this.nextId++
    const id = this.options.idPrefix === undefined ? counter : `${this.options.idPrefix}${counter}`
    const key = String(id)
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const line = this.serialize({ jsonrpc: '2.0', id, method, params })
      if (line === undefined) return reject(new PeerRequestError(`${method}: the request could not be serialized`))
      const bytes = Buffer.byteLength(line)
      if (bytes > this.maxRequestBytes) return reject(new RequestTooLargeError(method, bytes, this.maxRequestBytes))
      const onAbort = () => {
        this.pending.delete(key)
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const done =
        <T>(settle: (value: T) => void) =>
        (value: T) => {
          signal?.removeEventListener('abort', onAbort)
          this.pending.delete(key)
          settle(value)
        }
      this.pending.set(key, { resolve: done(resolve), reject: done(reject) })
      this.options.write(line)
    })
  }

  /** Fails every request of ours still waiting (the other end went away, or we are shutting down). */
  rejectPending(reason: string | Error): void {
    for (const pending of this.pending.values())
      pending.reject(typeof reason === 'string' ? new PeerRequestError(reason) : reason)
  }

  private dispatch(method: string, params: unknown, id: RpcId | undefined): void {
    const notification = id === undefined
    if (params !== undefined && !isObject(params)) {
      const error = new RpcError(
        RPC_ERRORS.INVALID_PARAMS,
        'Invalid params: "params" must be an object (parameters are passed by name)',
        { field: 'params' },
      )
      if (notification) this.options.warn(`notification ${method}: ${error.message}`)
      else this.replyError(id, error)
      return
    }
    new Promise((resolve) =>
      resolve(this.options.handle(method, (params ?? {}) as Record<string, unknown>, notification)),
    ).then(
      (result) => {
        if (!notification) this.send({ jsonrpc: '2.0', id, result: result ?? null })
      },
      (thrown) => {
        const error = (this.options.toError ?? internalError)(thrown)
        if (error.code === RPC_ERRORS.INTERNAL_ERROR)
          this.options.warn(`${method} failed: ${(thrown as any)?.stack ?? thrown}`)
        // A notification has nobody to answer (JSON-RPC 2.0 §4.1): the problem goes to stderr instead.
        if (notification) this.options.warn(`notification ${method}: ${error.message}`)
        else this.replyError(id, error)
      },
    )
  }

  private settle(id: RpcId, message: Record<string, unknown>): void {
    const pending = this.pending.get(String(id))
    if (!pending) {
      this.options.warn(
        `a response to request ${JSON.stringify(id)}, which is not waiting (answered late or never sent): ignored`,
      )
      return
    }
    if ('error' in message) {
      const error = isObject(message.error)
        ? (message.error as unknown as RpcErrorObject)
        : { code: RPC_ERRORS.INTERNAL_ERROR, message: String(message.error) }
      pending.reject(new PeerRequestError(`the other end answered with error ${error.code}: ${error.message}`, error))
    } else pending.resolve(message.result)
  }

  private replyError(id: RpcId, error: RpcError): void {
    this.send({ jsonrpc: '2.0', id, error: error.toObject() })
  }

  private serialize(message: Record<string, unknown>): string | undefined {
    try {
      return JSON.stringify(message)
    } catch (error) {
      this.options.warn(
        `a ${String(message.method)} request could not be serialized: ${error instanceof Error ? error.message : error}`,
      )
      return undefined
    }
  }

  private send(message: Record<string, unknown>): void {
    let line: string
    try {
      line = JSON.stringify(message)
    } catch (error) {
      const problem = `a ${String(message.method ?? 'response')} message could not be serialized: ${error instanceof Error ? error.message : error}`
      this.options.warn(problem)
      if (!('result' in message)) return
      line = JSON.stringify({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: RPC_ERRORS.INTERNAL_ERROR, message: `Internal error: ${problem}` },
      })
    }
    this.options.write(line)
  }
}
