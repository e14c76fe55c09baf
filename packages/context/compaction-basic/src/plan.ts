import type { Message } from '@dsh/llm'
import type { Entry } from './entries.ts'

export interface CutOptions {
  /** Estimated tokens the history after the cut may keep verbatim. */
  keepRecentTokens: number
  /** Keep a leading instructions message (AGENTS.md) verbatim instead of summarizing it. */
  keepInstructions: boolean
  estimate(message: Message): number
}

/** Where a compaction cuts: entries `[start, cut)` are replaced by the summary; `[0, cut)` is what it reads. */
export interface Cut {
  start: number
  cut: number
  fromSeq: number
  toSeq: number
  /** Estimated tokens of the whole history and of the part kept verbatim after the cut. */
  historyTokens: number
  keptTokens: number
  /** Estimated tokens of the entries the summary replaces (`[start, cut)`). */
  summarizedTokens: number
}

export type CutResult = { ok: true; cut: Cut } | { ok: false; reason: string }

/**
 * Chooses the cut: the earliest position that keeps at most `keepRecentTokens` of recent history verbatim,
 * among positions where cutting is safe:
 * - never before a tool message, so a tool call and its result (and an assistant message with calls and
 *   its results) stay on the same side;
 * - the seq range `[fromSeq, toSeq]` of the summarized entries must map back to exactly those entries in
 *   the fold (`deriveMessages` replaces the entries from the first with `seq >= fromSeq` while
 *   `seq <= toSeq`); after an earlier compaction the fold's seqs are not sorted (a summary carries its own,
 *   later seq), so a cut that would leave part of an earlier summary's range behind is skipped.
 */
export function chooseCut(entries: readonly Entry[], options: CutOptions): CutResult {
  const n = entries.length
  // Suffix sums: tokens kept when cutting at each position.
  const tail = new Float64Array(n + 1)
  for (let i = n - 1; i >= 0; i--) tail[i] = tail[i + 1]! + options.estimate(entries[i]!.message)
  // The leading instructions (AGENTS.md) and runtime context messages are kept verbatim, not summarized.
  let lead = 0
  while (
    options.keepInstructions &&
    lead < n &&
    (entries[lead]!.source === 'instructions' || entries[lead]!.source === 'runtime-context')
  )
    lead++
  return (
    (lead > 0 && cutFrom(entries, tail, lead, options.keepRecentTokens)) ||
    cutFrom(entries, tail, 0, options.keepRecentTokens) || {
      ok: false,
      reason: n
        ? 'the history holds nothing but an earlier summary and what must be kept verbatim'
        : 'the history is empty',
    }
  )
}

function cutFrom(
  entries: readonly Entry[],
  tail: Float64Array,
  start: number,
  keepRecentTokens: number,
): CutResult | undefined {
  const n = entries.length
  // Entries before `start` must sort before the range, or the fold would begin replacing them.
  const floor = start ? Math.max(...entries.slice(0, start).map((entry) => entry.seq)) : -1
  let minSeq = Infinity
  let maxSeq = -Infinity
  let onlySummaries = true
  for (let cut = start + 1; cut <= n; cut++) {
    const added = entries[cut - 1]!
    minSeq = Math.min(minSeq, added.seq)
    maxSeq = Math.max(maxSeq, added.seq)
    onlySummaries &&= added.source === 'summary'
    if (floor >= minSeq) return undefined
    if (tail[cut]! > keepRecentTokens || onlySummaries) continue
    if (cut < n && (entries[cut]!.message.role === 'tool' || entries[cut]!.seq <= maxSeq)) continue
    return {
      ok: true,
      cut: {
        start,
        cut,
        fromSeq: minSeq,
        toSeq: maxSeq,
        historyTokens: tail[0]!,
        keptTokens: tail[cut]!,
        summarizedTokens: tail[start]! - tail[cut]!,
      },
    }
  }
  return undefined
}

/** Atomic runs for chunking: a message and the tool messages after it (a call never leaves its results). */
export function units(messages: readonly Message[]): Message[][] {
  const out: Message[][] = []
  for (const message of messages) {
    if (message.role === 'tool' && out.length) out.at(-1)!.push(message)
    else out.push([message])
  }
  return out
}

/**
 * Packs messages into consecutive chunks of at most `budget` estimated tokens, whole units only. A unit
 * over the budget on its own gets a chunk to itself (the caller shortens it).
 */
export function pack(
  messages: readonly Message[],
  budget: number,
  estimate: (message: Message) => number,
): Message[][] {
  const chunks: Message[][] = []
  let current: Message[] = []
  let size = 0
  for (const unit of units(messages)) {
    const tokens = unit.reduce((sum, message) => sum + estimate(message), 0)
    if (current.length && size + tokens > budget) {
      chunks.push(current)
      current = []
      size = 0
    }
    current.push(...unit)
    size += tokens
  }
  if (current.length) chunks.push(current)
  return chunks
}
