import type { Context } from '@dsh/cordis'
import { UsageError } from '@dsh/cmdline'
import { SessionAdminError } from '@dsh/session-admin'
import type { ArchiveInvocation, DeleteInvocation, RenameInvocation } from './manage-options.ts'
import type { RunIO } from './run.ts'

/** `dsh sessions rename <id> "title"`: a user title (logged `session/title`), never replaced by a generated one. */
export async function renameSession(ctx: Context, invocation: RenameInvocation, io: RunIO): Promise<number> {
  await asUsage(() => ctx.sessionAdmin.rename(invocation.id, invocation.title))
  io.stderr.write(`dsh: session ${invocation.id} is now "${invocation.title.replace(/\s+/g, ' ').trim()}"\n`)
  return 0
}

/** `dsh sessions archive|unarchive <id>`: hidden from `dsh sessions list` (shown again with `--archived`). */
export async function archiveSession(ctx: Context, invocation: ArchiveInvocation, io: RunIO): Promise<number> {
  await ctx.sessionAdmin.setArchived(invocation.id, invocation.archived)
  io.stderr.write(`dsh: session ${invocation.id} ${invocation.archived ? 'archived (dsh sessions list --archived shows it)' : 'unarchived'}\n`)
  return 0
}

/**
 * `dsh sessions delete <id> [--yes]`: the session, its subagent children, their attachments, checkpoints and
 * spilled output, and their search index entries. Asks on a terminal; elsewhere only `--yes` deletes.
 */
export async function deleteSession(ctx: Context, invocation: DeleteInvocation, io: RunIO): Promise<number> {
  if (!invocation.yes) {
    if (!io.confirm) throw new UsageError(`dsh sessions delete ${invocation.id} deletes for good: pass --yes to confirm (stdin is not a terminal to ask on)`)
    const { header } = await ctx.sessions.read(invocation.id)
    if (!(await io.confirm(`Delete session ${invocation.id} (${header.cwd}) and its subagent sessions for good? [y/N] `))) {
      io.stderr.write('dsh: nothing deleted\n')
      return 1
    }
  }
  const deleted = await asUsage(() => ctx.sessionAdmin.delete(invocation.id))
  const children = deleted.length - 1
  io.stderr.write(`dsh: session ${invocation.id} deleted${children ? ` with ${children} subagent session${children === 1 ? '' : 's'}` : ''}\n`)
  return 0
}

/** A bad title is the user's mistake: exit 2 with the message, no stack. */
async function asUsage<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if (error instanceof SessionAdminError) throw new UsageError(error.message)
    throw error
  }
}
