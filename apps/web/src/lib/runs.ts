import type { Item, ToolItem } from './fold.ts'

/** Consecutive calls that fold into one summary row: fewer stay cards of their own. */
export const RUN_MIN_CALLS = 3

/** A row of the transcript: one item, or a run of consecutive calls folded into one summary row. */
export type Row =
  | { kind: 'item'; item: Item }
  | {
      kind: 'run'
      /** The first item's key, so a run keeps its row (and whether it is open) while it grows. */
      key: string
      /** Its items in order: the calls and the reasoning-only answers between them. */
      items: Item[]
      calls: ToolItem[]
      /** The items that stay shown while the run is folded: the calls that need the user or went wrong. */
      pinned: Item[]
    }

/** A call a user must see without opening anything: running, waiting for an answer, failed or cut. */
export function needsSight(item: Item): boolean {
  if (item.kind !== 'tool') return false
  if (item.approval && !item.approval.decided) return true
  return item.status === 'running' || item.status === 'error' || item.status === 'interrupted'
}

/**
 * An answer with nothing to read between two calls (only its reasoning, as a thinking model's every step
 * has): it does not break a run, and is folded with it.
 */
const quietAnswer = (item: Item) =>
  item.kind === 'assistant' && !item.text && !item.error && !item.streaming && !item.interrupted

/**
 * Folds each stretch of `min` or more consecutive calls (no text, message, notice or turn end between them)
 * into one run row; everything else is a row of its own, in order. Pure: the same items give the same rows.
 */
export function groupRuns(items: readonly Item[], min = RUN_MIN_CALLS): Row[] {
  const rows: Row[] = []
  let stretch: Item[] = []
  const close = () => {
    // A quiet answer after the last call belongs to what follows, not to the run.
    let end = stretch.length
    while (end > 0 && stretch[end - 1]!.kind !== 'tool') end--
    const members = stretch.slice(0, end)
    const calls = members.filter((item): item is ToolItem => item.kind === 'tool')
    if (calls.length >= min)
      rows.push({ kind: 'run', key: `r${members[0]!.key}`, items: members, calls, pinned: calls.filter(needsSight) })
    else for (const item of members) rows.push({ kind: 'item', item })
    for (const item of stretch.slice(end)) rows.push({ kind: 'item', item })
    stretch = []
  }
  for (const item of items) {
    if (item.kind === 'tool' || (stretch.length > 0 && quietAnswer(item))) stretch.push(item)
    else {
      close()
      rows.push({ kind: 'item', item })
    }
  }
  close()
  return rows
}

const KINDS: { test: (name: string) => boolean; one: string; many: string }[] = [
  { test: (name) => name === 'bash', one: 'command', many: 'commands' },
  { test: (name) => ['edit', 'write', 'str_replace_editor'].includes(name), one: 'edit', many: 'edits' },
  { test: (name) => name === 'read', one: 'read', many: 'reads' },
  { test: (name) => ['grep', 'glob', 'web_search'].includes(name), one: 'search', many: 'searches' },
]
const OTHER = { one: 'other call', many: 'other calls' }

const counted = (count: number, kind: { one: string; many: string }) => `${count} ${count === 1 ? kind.one : kind.many}`

/**
 * What a run did, in words: "Ran 37 commands", "Ran 12 tools (8 commands, 4 edits)"; "Running …" while a call
 * has not ended (running, queued or waiting for an answer).
 */
export function runSummary(calls: readonly ToolItem[]): string {
  const verb = calls.some((call) => call.status === 'running' || call.status === 'pending') ? 'Running' : 'Ran'
  const counts = new Map<{ one: string; many: string }, number>()
  for (const call of calls) {
    const kind = KINDS.find((candidate) => candidate.test(call.name)) ?? OTHER
    counts.set(kind, (counts.get(kind) ?? 0) + 1)
  }
  const commands = KINDS[0]!
  if (counts.size === 1 && counts.has(commands)) return `${verb} ${counted(calls.length, commands)}`
  const parts = [...KINDS, OTHER].filter((kind) => counts.has(kind)).map((kind) => counted(counts.get(kind)!, kind))
  return `${verb} ${calls.length} tools (${parts.join(', ')})`
}

/** How a run's calls stand, for its row: how many run, wait their turn, wait for the user, or failed. */
export function runState(calls: readonly ToolItem[]): {
  running: number
  queued: number
  waiting: number
  failed: number
} {
  const state = { running: 0, queued: 0, waiting: 0, failed: 0 }
  for (const call of calls) {
    if (call.approval && !call.approval.decided) state.waiting++
    else if (call.status === 'running') state.running++
    else if (call.status === 'pending') state.queued++
    else if (call.status === 'error' || call.status === 'interrupted') state.failed++
  }
  return state
}
