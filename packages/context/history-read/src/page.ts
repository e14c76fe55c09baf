import type { SummarizedEvent } from './summarized.ts'

export interface PageQuery {
  turn?: number
  search?: string
  fromSeq?: number
  maxChars: number
}

/**
 * One page of summarized events: those of `turn` and containing `search` (case-insensitive), from
 * `fromSeq` on, as many whole events as fit `maxChars` (a single longer one is cut, saying so), and where
 * the next page starts.
 */
export function page(events: readonly SummarizedEvent[], query: PageQuery): string {
  const needle = query.search?.toLowerCase()
  const matching = events.filter(
    (event) =>
      (query.turn === undefined || event.turn === query.turn) &&
      (query.fromSeq === undefined || event.seq >= query.fromSeq) &&
      (!needle || event.text.toLowerCase().includes(needle)),
  )
  if (!matching.length)
    return `No summarized event matches${query.turn !== undefined ? ` in turn ${query.turn}` : ''}${query.search ? ` containing "${query.search}"` : ''}${query.fromSeq !== undefined ? ` from seq ${query.fromSeq}` : ''}.`
  const parts: string[] = []
  let used = 0
  let shown = 0
  for (const event of matching) {
    const entry = `[seq ${event.seq}, turn ${event.turn}] ${event.text}`
    if (shown && used + entry.length > query.maxChars) break
    parts.push(
      entry.length > query.maxChars
        ? `${entry.slice(0, query.maxChars)}\n[… ${entry.length - query.maxChars} characters of this event not shown …]`
        : entry,
    )
    used += entry.length
    shown++
  }
  const rest = matching.length - shown
  const next = rest
    ? `\n[${rest} more matching event${rest === 1 ? '' : 's'}: call again with fromSeq ${matching[shown]!.seq}.]`
    : ''
  return parts.join('\n\n') + next
}
