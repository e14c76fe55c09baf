// Rewind: every file the session touched goes back to what it held before turn N. A file someone else
// changed since the session last wrote it is reported, not overwritten (unless forced). Nothing is ever
// written outside the workspace: paths come from the log, so each is checked as untrusted input, a path
// that is a symbolic link now is not followed, and the writes go through ctx.fs fenced to the workspace.
import { lstat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type { Session } from '@dsh/session'
import {
  relativePathProblem,
  type FileState,
  type RewindDone,
  type RewindProblem,
  type UnrecordedReason,
} from './events.ts'
import { fileHistories, sameState, stateBefore, turnStarts } from './fold.ts'
import { within, type Recorder } from './record.ts'
import type { BlobStore } from './store.ts'

export class RewindError extends Error {
  override name = 'RewindError'
  constructor(
    readonly code: 'REWIND_OUT_OF_RANGE' | 'REWIND_BUSY' | 'REWIND_NO_FORK_POINT',
    message: string,
  ) {
    super(message)
  }
}

export interface RewindOptions {
  toTurn: number
  force?: boolean
  /** Also fork the conversation at the turn's start (the new session's id is in the report). */
  fork?: boolean
  /** Who asked (`user:cli-flag`, `user:web-tab`, `client:acp`, …), logged. */
  actor: string
}

/** What a rewind would do, nothing written or logged: `restored` lists what it would restore. */
export type RewindPreview = Omit<RewindDone, 'actor' | 'forkedTo'>

/** Why a prior content is not there to restore, said plainly (the rewind and its preview both say it). */
const UNRECORDED: Record<UnrecordedReason, string> = {
  secret: 'not recorded (secret: a sandbox.denyRead path is never read)',
  'too-large': 'not kept (too-large: bigger than maxFileBytes, the largest file whose content is stored)',
  'not-a-file': 'not recorded (not-a-file: a link or a folder is never followed)',
  unreadable: 'not recorded (unreadable)',
}

const describe = (state: FileState) =>
  'absent' in state ? 'no file' : 'sha256' in state ? `${state.bytes} bytes` : `not recorded (${state.unrecorded})`

/** Checks and restores; the caller logs the outcome. */
export async function rewindFiles(
  ctx: Context,
  session: Session,
  options: RewindOptions & { preview?: boolean },
  parts: { recorder: Recorder; store: BlobStore },
): Promise<Omit<RewindDone, 'actor' | 'forkedTo'> & { forkAt?: number }> {
  const starts = turnStarts(session.events)
  if (!Number.isInteger(options.toTurn) || options.toTurn < 1 || options.toTurn > starts.length) {
    throw new RewindError(
      'REWIND_OUT_OF_RANGE',
      `session ${session.id} has turns 1..${starts.length}; there is no turn ${options.toTurn} to rewind to`,
    )
  }
  if (session.openTurn() !== undefined)
    throw new RewindError('REWIND_BUSY', `session ${session.id} is running a turn; rewind once it has ended`)
  const forkAt = options.fork ? starts[options.toTurn - 1]! - 1 : undefined
  if (forkAt !== undefined && forkAt < 0)
    throw new RewindError(
      'REWIND_NO_FORK_POINT',
      `turn ${options.toTurn} starts the log: there is no conversation before it to fork`,
    )
  const readAuthority = await ctx.sandboxPolicy.authority(session)
  const root = await ctx.fs.realpath(session.cwd)
  // The user's own rewind: the workspace is writable whatever the session's mode, and nothing else is.
  const writeAuthority: SandboxAuthority = {
    mode: 'workspace-write',
    writableRoots: [root],
    ...(readAuthority.paths ? { paths: readAuthority.paths } : {}),
    network: { kind: 'none' },
  }
  const restored: RewindDone['restored'] = []
  const conflicts: RewindProblem[] = []
  const skipped: RewindProblem[] = []
  for (const history of fileHistories(session.events).values()) {
    const target = stateBefore(history, options.toTurn)
    if (!target) continue
    const { path } = history
    const problem = relativePathProblem(path)
    if (problem) {
      skipped.push({ path, reason: `not a path in the workspace (${problem})` })
      continue
    }
    if ('unrecorded' in target) {
      skipped.push({ path, reason: `its content before turn ${options.toTurn} was ${UNRECORDED[target.unrecorded]}` })
      continue
    }
    const file = resolve(root, path)
    const place = await placeProblem(ctx, root, file)
    if (place) {
      skipped.push({ path, reason: place })
      continue
    }
    const current = await parts.recorder.diskState(file, readAuthority, parts.store)
    if (sameState(current, target)) continue
    if (!sameState(current, history.last) && !options.force) {
      conflicts.push({
        path,
        reason: `changed since the session last wrote it (now ${describe(current)}, the session left ${describe(history.last)})`,
      })
      continue
    }
    const data = 'sha256' in target ? await parts.store.get(target.sha256) : undefined
    if ('sha256' in target && !data) {
      skipped.push({ path, reason: `its checkpoint ${target.sha256.slice(0, 12)} is missing from the store` })
      continue
    }
    if (options.preview) {
      restored.push({ path, state: target })
      continue
    }
    try {
      if (!data) await ctx.fs.remove(file, { authority: writeAuthority })
      else await ctx.fs.writeFile(file, data, { authority: writeAuthority, createParents: true })
      restored.push({ path, state: target })
    } catch (error) {
      if (!(error instanceof FsError)) throw error
      skipped.push({ path, reason: `${error.code}: ${error.message}` })
    }
  }
  return {
    toTurn: options.toTurn,
    forced: !!options.force,
    restored,
    conflicts,
    skipped,
    ...(forkAt !== undefined ? { forkAt } : {}),
  }
}

/** Why a logged path cannot be written now: outside the workspace once links are resolved, or a link itself. */
async function placeProblem(ctx: Context, root: string, file: string): Promise<string | undefined> {
  if (!within(root, file) || file === root) return 'outside the workspace'
  const parent = await ctx.fs.realpath(dirname(file))
  if (!within(root, parent)) return 'outside the workspace (a folder on its way is a link out)'
  const info = await lstat(file).catch(() => undefined)
  if (info?.isSymbolicLink()) return 'it is a symbolic link now: not followed'
  return undefined
}
