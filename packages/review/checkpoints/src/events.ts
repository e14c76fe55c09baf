// The kinds checkpoints own (docs/architecture.md, "Review and rewind"). Display-only facts: the model never
// sees them, so they are ignorable (a log stays readable where this row is not mounted).

/**
 * What a file held at one moment: stored content (by sha256 of its bytes, in the checkpoint store), no file,
 * or not recorded and why (a secret path is never read; a file over the size limit is not copied).
 */
export type FileState = { sha256: string; bytes: number } | { absent: true } | { unrecorded: UnrecordedReason }
export type UnrecordedReason = 'secret' | 'too-large' | 'not-a-file' | 'unreadable'

export interface CheckpointBefore {
  callId: string
  /** 1-based: the turn (counted by `turn/start`) whose first effect on the file this precedes. */
  turn: number
  /** Relative to the session's workspace, with `/` separators. */
  path: string
  state: FileState
  /** How the change was seen: an editing tool's path argument, or a git comparison around a command. */
  via: 'tool' | 'git'
}

export interface CheckpointAfter {
  callId: string
  path: string
  state: FileState
}

/** A command ran where its file changes could not be compared (no git repository): rewind does not cover them. */
export interface CheckpointUncovered {
  callId: string
  turn: number
  reason: string
}

export interface RewindProblem {
  path: string
  reason: string
}

export interface RewindDone {
  /** Files were restored to their state before this turn (1-based). */
  toTurn: number
  forced: boolean
  restored: { path: string; state: FileState }[]
  /** Changed since the session last wrote them (by someone else): left as they are. */
  conflicts: RewindProblem[]
  /** Could not be restored (no recorded state, outside the workspace, a symlink now). */
  skipped: RewindProblem[]
  /** The conversation forked at the turn's start into this session. */
  forkedTo?: string
  actor: string
}

declare module '@dsh/session' {
  interface SessionEventMap {
    'checkpoint/before': CheckpointBefore
    'checkpoint/after': CheckpointAfter
    'checkpoint/uncovered': CheckpointUncovered
    'rewind/done': RewindDone
  }
}

const SHA = /^[0-9a-f]{64}$/
const REASONS = new Set<string>(['secret', 'too-large', 'not-a-file', 'unreadable'])

export function stateProblem(state: any, field = 'state'): string | undefined {
  if (!state || typeof state !== 'object') return `${field} must be an object`
  if (state.absent === true) return undefined
  if (typeof state.unrecorded === 'string') return REASONS.has(state.unrecorded) ? undefined : `${field}.unrecorded must be one of ${[...REASONS].join(', ')}`
  if (typeof state.sha256 !== 'string' || !SHA.test(state.sha256)) return `${field}.sha256 must be a sha256 hex digest`
  return Number.isInteger(state.bytes) && state.bytes >= 0 ? undefined : `${field}.bytes must be a natural number`
}

/** A workspace-relative path as the log may hold it: not absolute, no `..`, no empty or `.` segment. */
export function relativePathProblem(path: unknown, field = 'path'): string | undefined {
  if (typeof path !== 'string' || !path) return `${field} must be a non-empty string`
  if (path.startsWith('/') || path.includes('\\') || path.includes('\0')) return `${field} must be relative to the workspace`
  return path.split('/').some((part) => part === '' || part === '.' || part === '..') ? `${field} must not contain empty, . or .. segments` : undefined
}

const turnProblem = (turn: unknown) => (Number.isInteger(turn) && (turn as number) >= 1 ? undefined : 'turn must be a positive integer')
const callProblem = (callId: unknown) => (typeof callId === 'string' ? undefined : 'callId must be a string')

export const validators = {
  'checkpoint/before': (data: any) =>
    callProblem(data?.callId) ??
    turnProblem(data.turn) ??
    relativePathProblem(data.path) ??
    stateProblem(data.state) ??
    (data.via === 'tool' || data.via === 'git' ? undefined : 'via must be tool or git'),
  'checkpoint/after': (data: any) => callProblem(data?.callId) ?? relativePathProblem(data.path) ?? stateProblem(data.state),
  'checkpoint/uncovered': (data: any) => callProblem(data?.callId) ?? turnProblem(data.turn) ?? (typeof data.reason === 'string' ? undefined : 'reason must be a string'),
  'rewind/done': (data: any) => {
    if (!data || typeof data !== 'object') return 'must be an object'
    if (turnProblem(data.toTurn)) return 'toTurn must be a positive integer'
    if (typeof data.forced !== 'boolean') return 'forced must be a boolean'
    if (typeof data.actor !== 'string') return 'actor must be a string'
    if (!Array.isArray(data.restored) || !Array.isArray(data.conflicts) || !Array.isArray(data.skipped)) return 'restored, conflicts and skipped must be arrays'
    for (const [at, entry] of data.restored.entries()) {
      const problem = relativePathProblem(entry?.path, `restored[${at}].path`) ?? stateProblem(entry?.state, `restored[${at}].state`)
      if (problem) return problem
    }
    for (const list of ['conflicts', 'skipped'] as const)
      for (const [at, entry] of data[list].entries()) if (typeof entry?.path !== 'string' || typeof entry?.reason !== 'string') return `${list}[${at}] must have a path and a reason`
    return data.forkedTo === undefined || typeof data.forkedTo === 'string' ? undefined : 'forkedTo must be a string'
  },
} as const
