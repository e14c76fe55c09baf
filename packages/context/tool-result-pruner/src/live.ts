import type { ReliefInput } from '@dsh/compaction'
import type { Message } from '@dsh/llm'
import { deriveEntries, type AnySessionEvent, type SessionEvent, type SessionEventMap } from '@dsh/session'
import { shortenResult, type ShortenOptions } from './shorten.ts'

/**
 * The seq from which tool results belong to the latest `keepRecentSteps` steps: the `step/end` of the step
 * before them (the step in progress counts on top). -1: every step is recent.
 */
export function recentFrom(events: readonly SessionEvent[], keepRecentSteps: number): number {
  let ends = 0
  for (let i = events.length - 1; i >= 0; i--) {
    if ((events[i] as AnySessionEvent).type === 'step/end' && ends++ === keepRecentSteps) return i
  }
  return -1
}

/**
 * The `tool/pruned` events that bring the session under the relief's target: old oversized results, oldest
 * first, as few as do it, never one of the latest `keepRecentSteps` steps. Empty when even all of them
 * would not do it: then a summary is made anyway, and it should read (and the provider has cached) the
 * history as it is.
 */
export function planPruning(input: ReliefInput, options: ShortenOptions & { keepRecentSteps: number }): SessionEventMap['tool/pruned'][] {
  const session = input.agent.session
  const excess = input.tokens() - input.targetTokens
  if (excess < 0) return []
  const from = recentFrom(session.events, options.keepRecentSteps)
  if (from < 0) return []
  const planned: SessionEventMap['tool/pruned'][] = []
  let saved = 0
  // History order; a summary (a newer seq) may stand first, so every entry is looked at.
  for (const entry of deriveEntries(session.events)) {
    if (entry.seq >= from || entry.message.role !== 'tool') continue
    const [result] = entry.message.content
    const shorter = result && shortenResult(result.content, options)
    if (!shorter) continue
    const view: Message = { role: 'tool', content: [{ ...result, content: shorter.content }] }
    saved += input.estimate([entry.message]) - input.estimate([view])
    planned.push({ seq: entry.seq, content: shorter.content, note: `shortened to relieve the context: ${shorter.cut} of ${shorter.total} characters cut (head and tail kept)` })
    if (saved > excess) return planned
  }
  return []
}

/** Logs the planned `tool/pruned` events: from then on the model sees those results shorter. */
export function pruneHistory(input: ReliefInput, options: ShortenOptions & { keepRecentSteps: number }): number {
  const planned = planPruning(input, options)
  for (const data of planned) input.agent.session.append('tool/pruned', data)
  return planned.length
}
