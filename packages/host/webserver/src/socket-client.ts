import type { ClientMessage } from '@dsh/web-protocol'
import type { WebSocket } from 'ws'

type Disposer = () => void

/** One connected tab as channel handlers see it. */
export interface WebClient {
  readonly id: string
  /** The peer is on this machine (loopback). */
  readonly local: boolean
  readonly closed: boolean
  /** Queues a frame; frames queued in one tick go out as one WebSocket message (a JSON array). */
  send(frame: object): void
}

/**
 * A named stream a plugin offers (`session`, `sessions`): a tab subscribes with a key and params, the
 * handler sends frames until the returned disposer runs (on unsubscribe, disconnect or plugin disposal).
 */
export interface ChannelSpec {
  open(client: WebClient, key: string, params: unknown): Disposer | void | Promise<Disposer | void>
}

export interface SocketLimits {
  maxBufferedBytes: number
}

/**
 * One WebSocket: its subscriptions and its outgoing batch. A tab that cannot keep up (more than
 * `maxBufferedBytes` unsent) is disconnected rather than buffered without bound: it reconnects and
 * resumes from the last seq it saw.
 */
export class SocketClient implements WebClient {
  closed = false
  private queue: object[] = []
  private scheduled = false
  private readonly subs = new Map<string, Promise<Disposer | void>>()

  constructor(
    readonly id: string,
    readonly local: boolean,
    private readonly socket: WebSocket,
    private readonly limits: SocketLimits,
    private readonly channel: (name: string) => ChannelSpec | undefined,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  send(frame: object): void {
    if (this.closed) return
    this.queue.push(frame)
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => this.flush())
  }

  private flush(): void {
    this.scheduled = false
    if (this.closed || !this.queue.length) return
    const batch = this.queue
    this.queue = []
    this.socket.send(JSON.stringify(batch))
    if (this.socket.bufferedAmount > this.limits.maxBufferedBytes) this.socket.terminate()
  }

  receive(raw: string): void {
    let message: ClientMessage
    try {
      message = JSON.parse(raw)
    } catch {
      return this.send({ ch: 'error', key: '', message: 'a WebSocket message must be JSON' })
    }
    if (!message || typeof message !== 'object' || typeof message.ch !== 'string' || typeof message.key !== 'string') {
      return this.send({ ch: 'error', key: '', message: 'a WebSocket message needs op, ch and key' })
    }
    if (message.op === 'sub') this.subscribe(message.ch, message.key, message.params)
    else if (message.op === 'unsub') void this.unsubscribe(message.ch, message.key)
    else
      this.send({
        ch: 'error',
        key: (message as { key: string }).key,
        message: `unknown op "${(message as { op?: unknown }).op}"`,
      })
  }

  private subscribe(ch: string, key: string, params: unknown): void {
    const spec = this.channel(ch)
    if (!spec) return this.send({ ch: 'error', key, message: `no channel "${ch}" is mounted` })
    const id = `${ch}\u0000${key}`
    const previous = this.subs.get(id)
    const opened = (async () => {
      if (previous) (await previous)?.()
      return spec.open(this, key, params)
    })().catch((error: unknown) => {
      this.send({ ch: 'error', key, message: error instanceof Error ? error.message : String(error) })
      this.onFailure(error)
    })
    this.subs.set(id, opened)
  }

  private async unsubscribe(ch: string, key: string): Promise<void> {
    const id = `${ch}\u0000${key}`
    const opened = this.subs.get(id)
    this.subs.delete(id)
    ;(await opened)?.()
  }

  /** Ends every subscription (the socket closed or the host is stopping). */
  async dispose(): Promise<void> {
    this.closed = true
    const all = [...this.subs.values()]
    this.subs.clear()
    for (const opened of all) (await opened)?.()
  }
}
