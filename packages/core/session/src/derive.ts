import type { Message, TextBlock } from '@dsh/llm'
import type { AnySessionEvent, SessionEvent, UserMessageSource } from './events.ts'

/** One message of the derived history, with the seq of the event it came from. */
export interface HistoryEntry {
  message: Message
  seq: number
  /** For user messages: where they came from (instructions and summaries matter to compaction). */
  source?: UserMessageSource
}

/**
 * Kinds other packages declare whose `content` (text blocks) the model reads as a user-role message where
 * they stand in the log: a catalog of what the model may load (`skill/catalog` of @dsh/skill). An empty
 * `content` records a fact for people only. A new model-visible kind of this shape is added here, so the
 * request check derives it too (docs/architecture.md, "The session log").
 */
export const CONTEXT_KINDS: ReadonlySet<string> = new Set(['skill/catalog'])

function contextEntry(event: SessionEvent): HistoryEntry | undefined {
  const content = (event.data as { content?: TextBlock[] }).content
  return content?.length ? { message: { role: 'user', content: [...content] }, seq: event.seq } : undefined
}

function toEntry(event: AnySessionEvent): HistoryEntry | undefined {
  if (CONTEXT_KINDS.has(event.type)) return contextEntry(event)
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

/** Applies one event to the entries; returns whether the history changed. */
function foldInto(entries: HistoryEntry[], event: AnySessionEvent): boolean {
  if (event.type === 'tool/pruned') {
    // A shorter view of one logged tool result: the call keeps its result, the model sees less of it.
    const at = entries.findIndex((entry) => entry.seq === event.data.seq)
    const entry = entries[at]
    if (!entry || entry.message.role !== 'tool') return false
    const [block] = entry.message.content
    entries[at] = { ...entry, message: { role: 'tool', content: [{ ...block!, content: [...event.data.content] }] } }
    return true
  }
  const entry = toEntry(event)
  if (!entry) return false
  if (event.type === 'user/message' && event.data.replaces) {
    const { fromSeq, toSeq } = event.data.replaces
    const start = entries.findIndex((other) => other.seq >= fromSeq)
    const at = start === -1 ? entries.length : start
    let end = at
    while (end < entries.length && entries[end]!.seq <= toSeq) end++
    entries.splice(at, end - at, entry)
    return true
  }
  entries.push(entry)
  return true
}

/**
 * The model's history as a fold over the log (DESIGN §5): `user/message`, `assistant/message` (non-empty),
 * `tool/result`; a `user/message` with `replaces` stands in for the messages of its seq range (a summary);
 * `tool/pruned` shows one tool result shorter. Incremental: `update()` folds only events it has not seen.
 */
export class MessageFold {
  private entries: HistoryEntry[] = []
  private folded = 0
  private cache: Message[] | undefined

  update(events: readonly SessionEvent[]): Message[] {
    if (events.length < this.folded) {
      this.entries = []
      this.folded = 0
      this.cache = undefined
    }
    for (let i = this.folded; i < events.length; i++) if (foldInto(this.entries, events[i] as AnySessionEvent)) this.cache = undefined
    this.folded = events.length
    return (this.cache ??= this.entries.map((entry) => entry.message))
  }
}

/** The history with the seq (and source) of each message: what compaction cuts by. */
export function deriveEntries(events: readonly SessionEvent[]): HistoryEntry[] {
  const entries: HistoryEntry[] = []
  for (const event of events) foldInto(entries, event as AnySessionEvent)
  return entries
}

/** Pure form of the fold, for one-off use (invariants, tests, replay). */
export function deriveMessages(events: readonly SessionEvent[]): Message[] {
  return deriveEntries(events).map((entry) => entry.message)
}
