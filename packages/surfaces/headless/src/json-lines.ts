import type { SessionEvent } from '@dsh/session'

/**
 * The `--json` line: one session event, with the id of the session it belongs to. The shape is a stable
 * contract for scripts (documented in the README): exactly these five keys, in this order; `data` is the
 * event's data as logged.
 */
export interface JsonLine {
  type: string
  seq: number
  /** Epoch milliseconds. */
  time: number
  data: unknown
  sessionId: string
}

export function jsonLine(sessionId: string, event: SessionEvent): string {
  const line: JsonLine = { type: event.type, seq: event.seq, time: event.time, data: event.data, sessionId }
  return JSON.stringify(line) + '\n'
}
