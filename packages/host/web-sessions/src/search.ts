import type { SessionEvent, SessionSummary } from '@dsh/session'
import type { SearchHit } from '@dsh/web-protocol'

export interface SearchLimits {
  searchMaxSessions: number
  searchMaxHits: number
  searchCacheSessions: number
  snippetChars: number
}

interface Indexed {
  /** The log length the text was folded from: a longer log is folded again. */
  events: number
  /** Lower-cased message texts with the seq each came from. */
  parts: { seq: number; text: string; lower: string }[]
}

/** The words a person or the model wrote: user messages and assistant text (not reasoning or tool output). */
function textsOf(events: readonly SessionEvent[]): Indexed['parts'] {
  const parts: Indexed['parts'] = []
  for (const event of events) {
    if (event.type !== 'user/message' && event.type !== 'assistant/message') continue
    const blocks = (event.data as { content: { type: string; text?: string }[] }).content
    const text = blocks.flatMap((block) => (block.type === 'text' && block.text ? [block.text] : [])).join('\n')
    if (text) parts.push({ seq: event.seq, text, lower: text.toLowerCase() })
  }
  return parts
}

export function snippetAround(text: string, index: number, length: number, chars: number): string {
  const from = Math.max(0, index - Math.floor((chars - length) / 2))
  const to = Math.min(text.length, from + chars)
  return `${from > 0 ? '…' : ''}${text.slice(from, to).replace(/\s+/g, ' ').trim()}${to < text.length ? '…' : ''}`
}

/**
 * Search over titles, first prompts and message text, newest sessions first. Message texts are folded
 * once per session and kept (re-folded when the log grew), so repeated searches read no log twice.
 */
export class SessionSearch {
  private readonly index = new Map<string, Indexed>()

  constructor(
    private readonly limits: SearchLimits,
    private readonly load: (id: string) => Promise<readonly SessionEvent[]>,
  ) {}

  async search(query: string, sessions: SessionSummary[]): Promise<SearchHit[]> {
    const needle = query.trim().toLowerCase()
    if (!needle) return []
    const hits: SearchHit[] = []
    for (const summary of sessions.slice(0, this.limits.searchMaxSessions)) {
      if (hits.length >= this.limits.searchMaxHits) break
      const label = summary.title ?? summary.firstPrompt ?? ''
      if (label.toLowerCase().includes(needle)) {
        hits.push({ sessionId: summary.id, field: 'title', snippet: label })
        continue
      }
      const indexed = await this.indexed(summary)
      const part = indexed?.parts.find((candidate) => candidate.lower.includes(needle))
      if (part)
        hits.push({
          sessionId: summary.id,
          field: 'text',
          seq: part.seq,
          snippet: snippetAround(part.text, part.lower.indexOf(needle), needle.length, this.limits.snippetChars),
        })
    }
    return hits
  }

  private async indexed(summary: SessionSummary): Promise<Indexed | undefined> {
    const known = this.index.get(summary.id)
    if (known && known.events === summary.events) return known
    let events: readonly SessionEvent[]
    try {
      events = await this.load(summary.id)
    } catch {
      return undefined // unreadable (corrupt, or removed since the listing): not a hit
    }
    const fresh = { events: summary.events, parts: textsOf(events) }
    this.index.delete(summary.id)
    this.index.set(summary.id, fresh)
    while (this.index.size > this.limits.searchCacheSessions) this.index.delete(this.index.keys().next().value!)
    return fresh
  }
}
