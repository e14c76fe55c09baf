// The kinds checkpoints own (docs/architecture.md, "Review and rewind"). Display-only facts: the model never
// sees them, so they are ignorable (a log stays readable where this row is not mounted).
import { oneOf, Type, type KindSpec, type Static } from '@dsh/session'

// Each kind's type and its check are one TypeBox schema (issue #28.6); a workspace path's segments are checked
// after it (`relativePathProblem`, which rewind also uses).

export const UNRECORDED_REASONS = ['secret', 'too-large', 'not-a-file', 'unreadable'] as const
export type UnrecordedReason = (typeof UNRECORDED_REASONS)[number]

/**
 * What a file held at one moment: stored content (by sha256 of its bytes, in the checkpoint store), no file,
 * or not recorded and why (a secret path is never read; a file over the size limit is not copied).
 */
const FileStateData = Type.Union([
  Type.Object({
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', is: 'a sha256 hex digest' }),
    bytes: Type.Integer({ minimum: 0 }),
  }),
  Type.Object({ absent: Type.Literal(true) }),
  Type.Object({ unrecorded: oneOf(UNRECORDED_REASONS) }),
])
export type FileState = Static<typeof FileStateData>

const turn = Type.Integer({ minimum: 1 })
const path = Type.String()

const CheckpointBeforeData = Type.Object({
  callId: Type.String(),
  /** 1-based: the turn (counted by `turn/start`) whose first effect on the file this precedes. */
  turn,
  /** Relative to the session's workspace, with `/` separators. */
  path,
  state: FileStateData,
  /**
   * How the change was seen: an editing tool's path argument, a git comparison around a command, or (outside
   * git) a comparison of the workspace's manifests around a command.
   */
  via: oneOf(['tool', 'git', 'snapshot'] as const),
})
export type CheckpointBefore = Static<typeof CheckpointBeforeData>

const CheckpointAfterData = Type.Object({ callId: Type.String(), path, state: FileStateData })
export type CheckpointAfter = Static<typeof CheckpointAfterData>

/** A command ran where its file changes could not be compared (snapshots off, too many files): rewind does not cover them. */
const CheckpointUncoveredData = Type.Object({ callId: Type.String(), turn, reason: Type.String() })
export type CheckpointUncovered = Static<typeof CheckpointUncoveredData>

const RewindProblemData = Type.Object({ path: Type.String(), reason: Type.String() })
export type RewindProblem = Static<typeof RewindProblemData>

const RewindDoneData = Type.Object({
  /** Files were restored to their state before this turn (1-based). */
  toTurn: turn,
  forced: Type.Boolean(),
  restored: Type.Array(Type.Object({ path, state: FileStateData })),
  /** Changed since the session last wrote them (by someone else): left as they are. */
  conflicts: Type.Array(RewindProblemData),
  /** Could not be restored (no recorded state, outside the workspace, a symlink now). */
  skipped: Type.Array(RewindProblemData),
  /** The conversation forked at the turn's start into this session. */
  forkedTo: Type.Optional(Type.String()),
  actor: Type.String(),
})
export type RewindDone = Static<typeof RewindDoneData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'checkpoint/before': CheckpointBefore
    'checkpoint/after': CheckpointAfter
    'checkpoint/uncovered': CheckpointUncovered
    'rewind/done': RewindDone
  }
}

/** A workspace-relative path as the log may hold it: not absolute, no `..`, no empty or `.` segment. */
export function relativePathProblem(path: unknown, field = 'path'): string | undefined {
  if (typeof path !== 'string' || !path) return `${field} must be a non-empty string`
  if (path.startsWith('/') || path.includes('\\') || path.includes('\0'))
    return `${field} must be relative to the workspace`
  return path.split('/').some((part) => part === '' || part === '.' || part === '..')
    ? `${field} must not contain empty, . or .. segments`
    : undefined
}

/** The kinds as `defineKind` takes them: the schema, then the path rule on data of its shape. */
export const CHECKPOINT_KINDS: Record<string, Pick<KindSpec, 'schema' | 'validate'>> = {
  'checkpoint/before': {
    schema: CheckpointBeforeData,
    validate: (data: CheckpointBefore) => relativePathProblem(data.path, 'data.path'),
  },
  'checkpoint/after': {
    schema: CheckpointAfterData,
    validate: (data: CheckpointAfter) => relativePathProblem(data.path, 'data.path'),
  },
  'checkpoint/uncovered': { schema: CheckpointUncoveredData },
  'rewind/done': {
    schema: RewindDoneData,
    validate: (data: RewindDone) =>
      data.restored
        .map((entry, at) => relativePathProblem(entry.path, `data.restored[${at}].path`))
        .find((problem) => problem !== undefined),
  },
}
