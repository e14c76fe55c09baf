import type { Message } from '@dsh/llm'
import type { AnySessionEvent, SessionEvent, UserMessageSource } from '@dsh/session'

/** One message of the derived history with the seq of the event it came from. */
export interface Entry {
  message: Message
  seq: number
  /** For user messages: where they came from (`instructions` and `summary` matter to the planner). */
  source?: UserMessageSource
}

function toEntry(event: AnySessionEvent): Entry | undefined {
  switch (event.type) {
    case 'user/message':
      return { message: { role: 'user', content: [...event.data.content] }, seq: event.seq, source: event.data.source }
    case 'assistant/message':
      return event.data.content.length ? { message: { role: 'assistant', content: [...event.data.content] }, seq: event.seq } : undefined
    case 'tool/result': {
      const block = { type: 'tool-result' as const, callId: event.data.callId, content: [...event.data.content], ...(event.data.error ? { isError: true } : {}) }
      return { message: { role: 'tool', content: [block] }, seq: event.seq }
    }
    default:
      return undefined
  }
}

/**
 * The history with seqs: the same fold as `deriveMessages` in `@dsh/session` (which keeps the seqs private),
 * because a cut is written as a seq range the fold must map back to exactly the same messages. The
 * compaction tests check both folds agree; `@dsh/session` exporting its entries would remove this copy.
 */
export function deriveEntries(events: readonly SessionEvent[]): Entry[] {
  const entries: Entry[] = []
  for (const raw of events) {
    const event = raw as AnySessionEvent
    const entry = toEntry(event)
    if (!entry) continue
    if (event.type === 'user/message' && event.data.replaces) {
      const { fromSeq, toSeq } = event.data.replaces
      const start = entries.findIndex((other) => other.seq >= fromSeq)
      const at = start === -1 ? entries.length : start
      let end = at
      while (end < entries.length && entries[end]!.seq <= toSeq) end++
      entries.splice(at, end - at, entry)
      continue
    }
    entries.push(entry)
  }
  return entries
}
