// What a session changed on disk, from the log's checkpoint kinds and the stored contents: per file, its
// state before the session (or before turn N) and what the session last left, with a unified diff.
import { createTwoFilesPatch } from 'diff'
import {
  fileHistories,
  sameState,
  stateBefore,
  turnStarts,
  uncoveredNotes,
  type BlobStore,
  type FileState,
} from '@dsh/checkpoints'

export interface ChangesConfig {
  /** Larger sides are not diffed (the change is listed with its sizes). */
  maxDiffBytes: number
  contextLines: number
}

export type ChangeStatus = 'added' | 'deleted' | 'modified' | 'unrecorded'

export interface FileChange {
  /** Relative to the workspace. */
  path: string
  status: ChangeStatus
  before: FileState
  after: FileState
  /** The texts compared (absent for binary, unrecorded or oversized sides). */
  beforeText?: string
  afterText?: string
  /** A unified diff (`--- a/path`, `+++ b/path`), when both sides are text. */
  patch?: string
  added: number
  removed: number
  /** Why there is no diff: binary, too large, not recorded. */
  note?: string
}

export interface SessionChanges {
  sessionId: string
  /** Compared against the state before this turn (1 = before the session). */
  fromTurn: number
  turns: number
  files: FileChange[]
  /** What the listing does not cover (commands outside git, …). */
  notes: string[]
}

interface LoggedEvent {
  type: string
  seq: number
  data: any
}

const statusOf = (before: FileState, after: FileState): ChangeStatus =>
  'unrecorded' in before || 'unrecorded' in after
    ? 'unrecorded'
    : 'absent' in before
      ? 'added'
      : 'absent' in after
        ? 'deleted'
        : 'modified'

const isText = (data: Buffer) => !data.includes(0) && Buffer.from(data.toString('utf8'), 'utf8').equals(data)

async function textOf(
  store: BlobStore,
  state: FileState,
  config: ChangesConfig,
): Promise<{ text?: string; note?: string }> {
  if ('absent' in state) return { text: '' }
  if ('unrecorded' in state) return { note: `not recorded (${state.unrecorded})` }
  if (state.bytes > config.maxDiffBytes) return { note: `too large to diff (${state.bytes} bytes)` }
  const data = await store.get(state.sha256)
  if (!data) return { note: `its content ${state.sha256.slice(0, 12)} is missing from the checkpoint store` }
  return isText(data) ? { text: data.toString('utf8') } : { note: 'binary' }
}

function counted(patch: string): { added: number; removed: number } {
  let added = 0
  let removed = 0
  const lines = patch.split('\n')
  for (const line of lines.slice(lines.findIndex((header) => header.startsWith('@@')))) {
    if (line.startsWith('+')) added++
    else if (line.startsWith('-')) removed++
  }
  return { added, removed }
}

/** The files changed since before turn `fromTurn`, in the order first touched; unchanged ones left out. */
export async function sessionChanges(
  sessionId: string,
  events: readonly LoggedEvent[],
  store: BlobStore,
  fromTurn: number,
  config: ChangesConfig,
): Promise<SessionChanges> {
  const turns = turnStarts(events).length
  const files: FileChange[] = []
  for (const history of fileHistories(events).values()) {
    const before = stateBefore(history, fromTurn)
    if (!before || sameState(before, history.last)) continue
    const after = history.last
    const [left, right] = [await textOf(store, before, config), await textOf(store, after, config)]
    const change: FileChange = {
      path: history.path,
      status: statusOf(before, after),
      before,
      after,
      added: 0,
      removed: 0,
    }
    if (left.text !== undefined && right.text !== undefined) {
      const patch = createTwoFilesPatch(
        `a/${history.path}`,
        `b/${history.path}`,
        left.text,
        right.text,
        undefined,
        undefined,
        { context: config.contextLines },
      )
      Object.assign(change, { beforeText: left.text, afterText: right.text, patch, ...counted(patch) })
    } else change.note = left.note ?? right.note
    files.push(change)
  }
  return { sessionId, fromTurn, turns, files, notes: uncoveredNotes(events, fromTurn) }
}
