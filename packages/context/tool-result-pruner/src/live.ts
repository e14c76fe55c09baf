import type { ReliefInput } from '@dsh/compaction'
import type { Message, ToolCallBlock, ToolResultBlock } from '@dsh/llm'
import {
  deriveEntries,
  type AnySessionEvent,
  type HistoryEntry,
  type SessionEvent,
  type SessionEventMap,
} from '@dsh/session'
import { shortenArguments } from './arguments.ts'
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

export type PrunerOptions = ShortenOptions & { keepRecentSteps: number; minArgumentChars: number }

/** One planned pruning: the event, and the tokens it saves by the relief's estimate. */
interface ResultCandidate {
  kind: 'result'
  entry: HistoryEntry
  result: ToolResultBlock
  content: ToolResultBlock['content']
  cut: number
  total: number
  saved: number
}

/** One planned shortening of a call's arguments (`tool/arguments-pruned`). */
interface ArgumentsCandidate {
  kind: 'arguments'
  entry: HistoryEntry
  call: ToolCallBlock
  arguments: unknown
  cut: number
  total: number
  saved: number
}

type Candidate = ResultCandidate | ArgumentsCandidate

function candidates(input: ReliefInput, entry: HistoryEntry, options: PrunerOptions): Candidate[] {
  const { message } = entry
  if (message.role === 'assistant') {
    // A call's arguments weigh like a result (one 8 MiB `write`): shortened the same way (issue #27 part 8).
    return message.content.flatMap((block): Candidate[] => {
      if (block.type !== 'tool-call') return []
      const shorter = shortenArguments(block, options.minArgumentChars)
      if (!shorter) return []
      const view: Message = {
        role: 'assistant',
        content: message.content.map((other) => (other === block ? { ...block, arguments: shorter.arguments } : other)),
      }
      const total = JSON.stringify(block.arguments ?? null).length
      return [
        {
          kind: 'arguments',
          entry,
          call: block,
          arguments: shorter.arguments,
          cut: shorter.cut,
          total,
          saved: input.estimate([message]) - input.estimate([view]),
        },
      ]
    })
  }
  if (message.role !== 'tool') return []
  const [result] = message.content
  const shorter = result && shortenResult(result.content, options)
  if (!shorter) return []
  const view: Message = { role: 'tool', content: [{ ...result, content: shorter.content }] }
  return [
    {
      kind: 'result',
      entry,
      result,
      content: shorter.content,
      cut: shorter.cut,
      total: shorter.total,
      saved: input.estimate([message]) - input.estimate([view]),
    },
  ]
}

/**
 * The `tool/pruned` and `tool/arguments-pruned` events a relief of `input.mode` logs, in the order they are
 * planned (a call's oversized arguments count like an oversized result):
 * - `threshold` (default): old oversized results (outside the latest `keepRecentSteps` steps), oldest
 *   first, as few as bring the session under the target — none when even all of them would not;
 * - `old`: the same, but as many as needed even when that is not enough (a recovery round);
 * - `recent`: the largest oversized results of the latest steps, largest first, until the target is met.
 * The results of `recent` are returned without their spill note; `pruneHistory` adds it.
 */
export function planPruning(input: ReliefInput, options: PrunerOptions): Candidate[] {
  const session = input.agent.session
  const mode = input.mode ?? 'threshold'
  const excess = input.tokens() - input.targetTokens
  if (excess < 0) return []
  const from = recentFrom(session.events, options.keepRecentSteps)
  const entries = deriveEntries(session.events)
  const recent = (entry: HistoryEntry) => entry.seq >= from
  // History order for old results; a summary (a newer seq) may stand first, so every entry is looked at.
  const pool = entries
    .filter((entry) => (mode === 'recent' ? recent(entry) : from >= 0 && !recent(entry)))
    .flatMap((entry) => candidates(input, entry, options))
  if (mode === 'recent') pool.sort((a, b) => b.saved - a.saved)
  const planned: Candidate[] = []
  let saved = 0
  for (const one of pool) {
    planned.push(one)
    saved += one.saved
    if (saved > excess) return planned
  }
  return mode === 'threshold' ? [] : planned
}

/** Where a shortened recent result can still be read whole: the spill file its producer saved, or a new one. */
export type SpillHandle = (result: ToolResultBlock, seq: number) => Promise<string | undefined>

/**
 * Logs the planned `tool/pruned` events: from then on the model sees those results shorter. A recent
 * result's view names the file that holds it whole (`spill`), so nothing the model may still need is lost.
 */
export async function pruneHistory(input: ReliefInput, options: PrunerOptions, spill?: SpillHandle): Promise<number> {
  const planned = planPruning(input, options)
  for (const one of planned) {
    if (one.kind === 'arguments') {
      // The log keeps the call whole (its assistant/message); the model sees the stub from now on.
      const note = `arguments of ${one.call.name} shortened to relieve the context: ${one.cut} of ${one.total} characters cut (size and sha256 kept)`
      input.agent.session.append('tool/arguments-pruned', {
        seq: one.entry.seq,
        callId: one.call.callId,
        arguments: one.arguments as never,
        note,
      })
      continue
    }
    const note = `shortened to relieve the context: ${one.cut} of ${one.total} characters cut (head and tail kept)`
    const data: SessionEventMap['tool/pruned'] = { seq: one.entry.seq, content: one.content, note }
    if (input.mode === 'recent') {
      const path = spill ? await spill(one.result, one.entry.seq) : undefined
      const handle = path
        ? `[Shortened to fit the context; the whole result is saved at ${path}: read it with offset and limit, or grep it.]`
        : '[Shortened to fit the context; run the tool again for the whole result.]'
      data.content = [...one.content, { type: 'text', text: handle }]
    }
    input.agent.session.append('tool/pruned', data)
  }
  return planned.length
}
