import { WS_PROTOCOL, type ClientMessage, type Frame } from '@dsh/web-protocol'
import { Emitter } from './emitter.ts'

/** `signed-out`: the host answers but no longer knows this browser's sign-in (it was restarted). */
export type StreamState = 'connecting' | 'open' | 'offline' | 'signed-out'

interface Subscription {
  ch: string
  key: string
  /** Computed at every (re)subscribe: a session asks for the events after the last one it has. */
  params: () => unknown
  onFrame: (frame: Frame) => void
}

const RETRY_MS = [250, 500, 1000, 2000, 4000]
/** How often a signed-out tab asks whether this browser has signed in again (in another tab, from the new link). */
const SIGN_IN_POLL_MS = 2000

/**
 * Whether the host answers and knows this browser's sign-in. A WebSocket upgrade refused with 401 looks like
 * any other drop to a script, so a cheap API call tells the two apart.
 */
async function probe(): Promise<'ok' | 'offline' | 'signed-out'> {
  try {
    const response = await fetch('/api/host.info', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    const body = (await response.json().catch(() => undefined)) as { ok: boolean; error?: { code: string } } | undefined
    return body?.ok === false && body.error?.code.startsWith('SIGN_IN_') ? 'signed-out' : body ? 'ok' : 'offline'
  } catch {
    return 'offline'
  }
}

/**
 * The one WebSocket of this tab. Subscriptions outlive the socket: after a drop it reconnects with backoff
 * and subscribes again, each with fresh params, so a session resumes from the seq after its last event.
 * After a restart of dsh web the old sign-in is gone: the tab says so (`signed-out`) and waits until this
 * browser signs in again (the new link, in any tab: the cookie is shared), then resumes. The auth is not
 * bypassed: only a new sign-in brings the tab back.
 */
class Stream {
  state: StreamState = 'connecting'
  readonly changed = new Emitter()
  private socket: WebSocket | undefined
  private readonly subs = new Set<Subscription>()
  private attempt = 0
  private pollTimer: ReturnType<typeof setInterval> | undefined

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
      if (this.state === 'open' && ![...this.subs].some((other) => other.ch === ch && other.key === key))
        this.send({ op: 'unsub', ch, key })
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
      for (const frame of frames)
        for (const sub of this.subs)
          if (sub.key === frame.key && (sub.ch === frame.ch || frame.ch === 'error')) sub.onFrame(frame)
    })
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return
      this.socket = undefined
      void probe().then((answer) => {
        if (answer === 'signed-out') return this.waitForSignIn()
        this.setState('offline')
        const delay = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)]
        setTimeout(() => this.connect(), delay)
      })
    })
  }

  /** An API call was refused for the sign-in: the socket will be too; say so now. */
  signedOut(): void {
    if (this.state !== 'signed-out') this.socket?.close()
  }

  /** Checks at once (the banner's button) instead of at the next poll. */
  recheck(): void {
    if (this.state === 'signed-out') void this.pollSignIn()
  }

  private waitForSignIn(): void {
    this.setState('signed-out')
    this.pollTimer ??= setInterval(() => void this.pollSignIn(), SIGN_IN_POLL_MS)
  }

  private async pollSignIn(): Promise<void> {
    if ((await probe()) !== 'ok' || this.state !== 'signed-out') return
    clearInterval(this.pollTimer)
    this.pollTimer = undefined
    this.attempt = 0
    this.connect()
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
