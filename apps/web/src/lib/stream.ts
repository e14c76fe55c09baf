import { WS_PROTOCOL, type ClientMessage, type Frame } from '@dsh/web-protocol'
import { Emitter } from './emitter.ts'

export type StreamState = 'connecting' | 'open' | 'offline'

interface Subscription {
  ch: string
  key: string
  /** Computed at every (re)subscribe: a session asks for the events after the last one it has. */
  params: () => unknown
  onFrame: (frame: Frame) => void
}

const RETRY_MS = [250, 500, 1000, 2000, 4000]

/**
 * The one WebSocket of this tab. Subscriptions outlive the socket: after a drop it reconnects with backoff
 * and subscribes again, each with fresh params, so a session resumes from the seq after its last event.
 */
class Stream {
  state: StreamState = 'connecting'
  readonly changed = new Emitter()
  private socket: WebSocket | undefined
  private readonly subs = new Set<Subscription>()
  private attempt = 0

  start(): void {
    if (this.socket) return
    this.connect()
  }

  subscribe(ch: string, key: string, params: () => unknown, onFrame: (frame: Frame) => void): () => void {
    const sub: Subscription = { ch, key, params, onFrame }
    this.subs.add(sub)
    if (this.state === 'open') this.send({ op: 'sub', ch, key, params: params() })
    return () => {
      this.subs.delete(sub)
      if (this.state === 'open' && ![...this.subs].some((other) => other.ch === ch && other.key === key)) this.send({ op: 'unsub', ch, key })
    }
  }

  private connect(): void {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`
    // The upgrade carries the sign-in cookie like any same-origin request.
    const socket = new WebSocket(url, [WS_PROTOCOL])
    this.socket = socket
    this.setState('connecting')
    socket.addEventListener('open', () => {
      this.attempt = 0
      this.setState('open')
      for (const sub of this.subs) this.send({ op: 'sub', ch: sub.ch, key: sub.key, params: sub.params() })
    })
    socket.addEventListener('message', (message) => {
      let frames: Frame[]
      try {
        frames = JSON.parse(String(message.data))
      } catch {
        return
      }
      // An error frame names the key it is about (a session id); it goes to that subscription whatever its channel.
      for (const frame of frames) for (const sub of this.subs) if (sub.key === frame.key && (sub.ch === frame.ch || frame.ch === 'error')) sub.onFrame(frame)
    })
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return
      this.socket = undefined
      this.setState('offline')
      const delay = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)]
      setTimeout(() => this.connect(), delay)
    })
  }

  private send(message: ClientMessage): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message))
  }

  private setState(state: StreamState): void {
    if (this.state === state) return
    this.state = state
    this.changed.emit()
  }
}

export const stream = new Stream()
