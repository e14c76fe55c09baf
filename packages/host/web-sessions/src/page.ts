import type { PageResult, WireEvent } from '@dsh/web-protocol'

/** Kinds whose data the page never shows and that can be large (the whole system prompt and tool schemas). */
const SLIMMED = new Set(['request/header'])

/** An event as the page receives it: bulky kinds keep their place in the log but not their data. */
export function toWire(event: WireEvent): WireEvent {
  return SLIMMED.has(event.type)
    ? { type: event.type, seq: event.seq, time: event.time, data: { omitted: true } }
    : event
}

/**
 * One page of a log, read backwards from `before` (docs/architecture.md, "Surfaces": the page renders the log by page).
 * Stream chunks of a step that has its `assistant/message` are dropped (the message holds the same text),
 * so a finished conversation pages at its real size. A page extends back to the `turn/start` of the turn it
 * ends in (at most `limit` more events), so turns are not split between pages.
 */
export function pageOf(events: readonly WireEvent[], before: number, limit: number): PageResult {
  const end = Math.max(0, Math.min(before, events.length))
  const kept: WireEvent[] = []
  let covered = false
  let start = end
  let scanned = 0
  for (let seq = end - 1; seq >= 0; seq--) {
    const event = events[seq]!
    if (kept.length >= limit && (event.type === 'turn/end' || scanned >= 2 * limit)) break
    start = seq
    scanned++
    if (event.type === 'assistant/message') covered = true
    else if (event.type === 'step/start' || event.type === 'turn/start') covered = false
    if (!(event.type === 'assistant/chunk' && covered)) kept.push(toWire(event))
    if (kept.length >= limit && event.type === 'turn/start') break
  }
  return { events: kept.reverse(), start, end }
}
