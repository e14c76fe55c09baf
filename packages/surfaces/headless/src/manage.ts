import type { Context } from '@dsh/cordis'
import { UsageError } from '@dsh/cmdline'
import { SessionAdminError } from '@dsh/session-admin'
import type { ArchiveInvocation, RenameInvocation } from './manage-options.ts'
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

/** A bad title is the user's mistake: exit 2 with the message, no stack. */
async function asUsage(action: () => Promise<void>): Promise<void> {
  try {
    await action()
  } catch (error) {
    if (error instanceof SessionAdminError) throw new UsageError(error.message)
    throw error
  }
}
