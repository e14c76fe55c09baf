// `dsh sessions diff` and `dsh rewind` (docs/architecture.md, "Review and rewind").
import type { Checkpoints } from '@dsh/checkpoints'
import { UsageError } from '@dsh/cmdline'
import type { Context } from '@dsh/cordis'
import type { Session } from '@dsh/session'
import type { SessionChangesService } from '@dsh/session-changes'
import type { DiffInvocation, RewindInvocation } from './review-options.ts'
import type { RunIO } from './run.ts'

const STATUS = { added: 'A', deleted: 'D', modified: 'M', unrecorded: '?' } as const

/** Review is optional in a composition: without its rows the commands say so instead of failing to mount. */
function service<T>(ctx: Context, key: 'sessionChanges' | 'checkpoints', row: string): T {
  const found = ctx.get(key) as T | undefined
  if (!found) throw new UsageError(`${row} is not mounted in this profile (no ctx.${key})`)
  return found
}

/** `dsh sessions diff <id> [--turn N] [--json]`: the files the session changed, then their unified diffs. */
export async function diffSession(ctx: Context, invocation: DiffInvocation, io: RunIO): Promise<number> {
  const changes = await service<SessionChangesService>(ctx, 'sessionChanges', 'session-changes')
    .changes(invocation.id, { fromTurn: invocation.fromTurn })
    .catch((error) => {
      throw error?.code === 'CHANGES_OUT_OF_RANGE' ? new UsageError(error.message) : error
    })
  if (invocation.json) {
    io.stdout.write(
      JSON.stringify({ ...changes, files: changes.files.map(({ beforeText: _b, afterText: _a, ...file }) => file) }) +
        '\n',
    )
    return 0
  }
  const since = invocation.fromTurn === 1 ? 'the session started' : `turn ${invocation.fromTurn}`
  const lines = [
    `${changes.files.length} file${changes.files.length === 1 ? '' : 's'} changed since ${since} (${changes.turns} turn${changes.turns === 1 ? '' : 's'})`,
  ]
  for (const file of changes.files)
    lines.push(
      `${STATUS[file.status]} ${file.path}${file.patch ? ` (+${file.added} −${file.removed})` : ` (${file.note})`}`,
    )
  for (const note of changes.notes) lines.push(`note: ${note}`)
  for (const file of changes.files) if (file.patch) lines.push('', file.patch.replace(/^=+\n/, '').trimEnd())
  io.stdout.write(lines.join('\n') + '\n')
  return 0
}

const rangeError = (error: any) =>
  error?.code === 'REWIND_OUT_OF_RANGE' || error?.code === 'REWIND_NO_FORK_POINT'
    ? new UsageError(error.message)
    : error

/** `dsh rewind <id> --to-turn N --preview`: what a rewind would write and remove, nothing written or logged. */
async function previewRewind(
  checkpoints: Checkpoints,
  session: Session,
  invocation: RewindInvocation,
  io: RunIO,
): Promise<number> {
  const preview = await checkpoints
    .previewRewind(session, { toTurn: invocation.toTurn, force: invocation.force, actor: 'user:cli-flag' })
    .catch((error) => {
      throw rangeError(error)
    })
  if (invocation.json) {
    io.stdout.write(JSON.stringify({ preview: true, ...preview }) + '\n')
    return 0
  }
  const lines = preview.restored.map((entry) =>
    'absent' in entry.state
      ? `would remove ${entry.path}`
      : `would restore ${entry.path}${'bytes' in entry.state ? ` (${entry.state.bytes} bytes)` : ''}`,
  )
  for (const entry of preview.conflicts) lines.push(`would leave ${entry.path} (conflict): ${entry.reason}`)
  for (const entry of preview.skipped) lines.push(`would skip ${entry.path}: ${entry.reason}`)
  if (!lines.length)
    lines.push(`nothing to restore: no file the session touched changed from turn ${invocation.toTurn} on`)
  lines.push(`preview only: nothing was written (dsh rewind ${session.id} --to-turn ${invocation.toTurn} applies it)`)
  io.stdout.write(lines.join('\n') + '\n')
  return 0
}

/**
 * `dsh rewind <id> --to-turn N [--force] [--fork] [--json]`: the session is opened for writing (its lease
 * taken), its files restored, `rewind/done` logged, and closed. Exit 1 when a file was left as it is.
 */
export async function rewindSession(ctx: Context, invocation: RewindInvocation, io: RunIO): Promise<number> {
  const checkpoints = service<Checkpoints>(ctx, 'checkpoints', 'checkpoints')
  const session = await ctx.sessions.resume(invocation.id)
  try {
    if (invocation.preview) return await previewRewind(checkpoints, session, invocation, io)
    const done = await checkpoints
      .rewind(session, {
        toTurn: invocation.toTurn,
        force: invocation.force,
        fork: invocation.fork,
        actor: 'user:cli-flag',
      })
      .catch((error) => {
        throw rangeError(error)
      })
    if (done.forkedTo) await ctx.sessions.close(done.forkedTo)
    if (invocation.json) io.stdout.write(JSON.stringify(done) + '\n')
    else {
      const lines = done.restored.map((entry) => `restored ${entry.path}`)
      for (const entry of done.conflicts) lines.push(`conflict ${entry.path}: ${entry.reason}`)
      for (const entry of done.skipped) lines.push(`skipped ${entry.path}: ${entry.reason}`)
      if (!lines.length)
        lines.push(`nothing to restore: no file the session touched changed from turn ${invocation.toTurn} on`)
      if (done.forkedTo) lines.push(`forked: ${done.forkedTo} (dsh resume ${done.forkedTo} "…")`)
      io.stdout.write(lines.join('\n') + '\n')
    }
    const left = done.conflicts.length + done.skipped.length
    if (left)
      io.stderr.write(
        `dsh: ${left} file${left === 1 ? ' was' : 's were'} not restored${done.conflicts.length && !invocation.force ? ' (--force overwrites files changed since)' : ''}\n`,
      )
    return left ? 1 : 0
  } finally {
    await ctx.sessions.close(session.id)
  }
}
