import type { Message } from '@dsh/llm'
import type { AnySessionEvent, SessionEvent } from './events.ts'

interface Derived {
  message: Message
  seq: number
}

function toMessage(event: AnySessionEvent): Message | undefined {
  switch (event.type) {
    case 'user/message':
      return { role: 'user', content: [...event.data.content] }
    case 'assistant/message':
      return event.data.content.length ? { role: 'assistant', content: [...event.data.content] } : undefined
    case 'tool/result': {
      const block = { type: 'tool-result' as const, callId: event.data.callId, content: [...event.data.content], ...(event.data.error ? { isError: true } : {}) }
      return { role: 'tool', content: [block] }
    }
    default:
      return undefined
  }
}

/**
 * The model's history as a fold over the log's surface events (DESIGN §5): `user/message`,
 * `assistant/message` (non-empty), `tool/result`; a `user/message` with `replaces` stands in for the messages
 * derived from its seq range. Incremental: `update()` folds only events it has not seen.
 */
export class MessageFold {
  private derived: Derived[] = []
  private folded = 0
  private cache: Message[] | undefined

  update(events: readonly SessionEvent[]): Message[] {
    if (events.length < this.folded) this.reset()
    for (let i = this.folded; i < events.length; i++) this.fold(events[i] as AnySessionEvent)
    this.folded = events.length
    return (this.cache ??= this.derived.map((entry) => entry.message))
  }

  private reset() {
    this.derived = []
    this.folded = 0
    this.cache = undefined
  }

  private fold(event: AnySessionEvent) {
    const message = toMessage(event)
    if (!message) return
    this.cache = undefined
    if (event.type === 'user/message' && event.data.replaces) {
      const { fromSeq, toSeq } = event.data.replaces
      const start = this.derived.findIndex((entry) => entry.seq >= fromSeq)
      const at = start === -1 ? this.derived.length : start
      let end = at
      while (end < this.derived.length && this.derived[end]!.seq <= toSeq) end++
      this.derived.splice(at, end - at, { message, seq: event.seq })
      return
    }
    this.derived.push({ message, seq: event.seq })
  }
}

/** Pure form of the fold, for one-off use (invariants, tests, replay). */
export function deriveMessages(events: readonly SessionEvent[]): Message[] {
  return new MessageFold().update(events)
}
