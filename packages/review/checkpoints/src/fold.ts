// Pure folds of the checkpoint kinds: which files a session touched, what each held before a turn, and what
// the session last left in it. Rewind and the review (session-changes) both read the log through these.
import type { FileState } from './events.ts'

interface LoggedEvent {
  type: string
  seq: number
  data: any
}

export interface FileHistory {
  path: string
  /** Each turn's first-touch state, oldest first. */
  befores: { turn: number; seq: number; state: FileState }[]
  /** What the session last left in the file (a call's after, or a rewind's restore). */
  last: FileState
  lastSeq: number
}

/** The seq of each turn's `turn/start`: index 0 is turn 1. */
export function turnStarts(events: Iterable<LoggedEvent>): number[] {
  const starts: number[] = []
  for (const event of events) if (event.type === 'turn/start') starts.push(event.seq)
  return starts
}

/** Every file the checkpoint kinds name, by workspace-relative path, in the order first touched. */
export function fileHistories(events: Iterable<LoggedEvent>): Map<string, FileHistory> {
  const files = new Map<string, FileHistory>()
  const entry = (path: string, state: FileState, seq: number) => {
    let history = files.get(path)
    if (!history) files.set(path, (history = { path, befores: [], last: state, lastSeq: seq }))
    return history
  }
  for (const { type, seq, data } of events) {
    if (type === 'checkpoint/before')
      entry(data.path, data.state, seq).befores.push({ turn: data.turn, seq, state: data.state })
    else if (type === 'checkpoint/after')
      Object.assign(entry(data.path, data.state, seq), { last: data.state, lastSeq: seq })
    else if (type === 'rewind/done')
      for (const restored of data.restored)
        Object.assign(entry(restored.path, restored.state, seq), { last: restored.state, lastSeq: seq })
  }
  return files
}

/** The file's state before turn `turn`: its first checkpoint from that turn on; undefined when untouched since. */
export function stateBefore(history: FileHistory, turn: number): FileState | undefined {
  return history.befores.find((before) => before.turn >= turn)?.state
}

export const sameState = (a: FileState, b: FileState): boolean =>
  'sha256' in a
    ? 'sha256' in b && a.sha256 === b.sha256
    : 'absent' in a
      ? 'absent' in b
      : 'unrecorded' in b && a.unrecorded === b.unrecorded

/** Why commands' changes are not covered, per turn (`checkpoint/uncovered`). */
export function uncoveredNotes(events: Iterable<LoggedEvent>, fromTurn: number): string[] {
  const reasons = new Set<string>()
  for (const { type, data } of events)
    if (type === 'checkpoint/uncovered' && data.turn >= fromTurn) reasons.add(data.reason)
  return [...reasons]
}
