import type { Context } from '@dsh/cordis'
import type { SessionEvent } from '@dsh/session'
import type { Frame } from '@dsh/web-protocol'
import type { WebClient } from '@dsh/webserver'
import { toWire } from './page.ts'
import type { SessionReader } from './reader.ts'

/**
 * The `session` channel: a tab subscribes to one session with `since` (the first seq it has not seen) and
 * receives every event from there, live. After a reconnect it subscribes again with its last seq + 1 and
 * misses nothing. A gap longer than `maxReplayEvents` is not replayed: the tab gets `reset` and reloads by
 * pages instead.
 */
export function openSessionStream(
  ctx: Context,
  reader: SessionReader,
  maxReplayEvents: number,
  client: WebClient,
  sessionId: string,
  params: unknown,
): () => void {
  const since = (params as { since?: unknown })?.since
  let next = typeof since === 'number' && Number.isInteger(since) && since >= 0 ? since : 0
  let ready = false
  let stopped = false
  const early: SessionEvent[] = []
  const send = (frame: Frame) => client.send(frame)
  const deliver = (event: SessionEvent) => {
    if (stopped || event.seq < next) return
    next = event.seq + 1
    send({ ch: 'session', key: sessionId, type: 'event', event: toWire(event) })
  }
  // Listen first, then read: an event appended while the snapshot is read is held, not lost.
  const stop = ctx.on('session/event', (session, event) => {
    if (session.id !== sessionId) return
    if (ready) deliver(event)
    else early.push(event)
  })
  const start = async () => {
    try {
      const { events } = await reader.read(sessionId)
      if (events.length - next > maxReplayEvents) {
        next = events.length
        send({ ch: 'session', key: sessionId, type: 'reset', length: events.length })
      } else {
        for (let seq = next; seq < events.length; seq++) deliver(events[seq]!)
      }
    } catch (error) {
      if (!stopped)
        send({ ch: 'error', key: sessionId, message: error instanceof Error ? error.message : String(error) })
    }
    ready = true
    for (const event of early.splice(0)) deliver(event)
  }
  void start()
  return () => {
    stopped = true
    stop()
  }
}
