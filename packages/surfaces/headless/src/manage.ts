import type { Context } from '@dsh/cordis'
import { UsageError } from '@dsh/cmdline'
import { SessionAdminError } from '@dsh/session-admin'
import { resolve } from 'node:path'
import type { ArchiveInvocation, DeleteInvocation, RenameInvocation, TransferInvocation } from './manage-options.ts'
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
  io.stderr.write(
    `dsh: session ${invocation.id} ${invocation.archived ? 'archived (dsh sessions list --archived shows it)' : 'unarchived'}\n`,
  )
  return 0
}

/**
 * `dsh sessions delete <id> [--yes]`: the session, its subagent children, their attachments, checkpoints and
 * spilled output, and their search index entries. Asks on a terminal; elsewhere only `--yes` deletes.
 */
export async function deleteSession(ctx: Context, invocation: DeleteInvocation, io: RunIO): Promise<number> {
  if (!invocation.yes) {
    if (!io.confirm)
      throw new UsageError(
        `dsh sessions delete ${invocation.id} deletes for good: pass --yes to confirm (stdin is not a terminal to ask on)`,
      )
    const { header } = await ctx.sessions.read(invocation.id)
    if (
      !(await io.confirm(`Delete session ${invocation.id} (${header.cwd}) and its subagent sessions for good? [y/N] `))
    ) {
      io.stderr.write('dsh: nothing deleted\n')
      return 1
    }
  }
  const deleted = await asUsage(() => ctx.sessionAdmin.delete(invocation.id))
  io.stderr.write(`dsh: session ${invocation.id} deleted${countChildren(deleted)}\n`)
  return 0
}

/**
 * `dsh sessions export <id> -o <file>` (the session, its subagent children, attachments, checkpoints and
 * spilled output) and `dsh sessions import <file>` (into this DSH_HOME; an id stored here is refused).
 */
export async function transferSessions(ctx: Context, invocation: TransferInvocation, io: RunIO): Promise<number> {
  if (invocation.command === 'sessions-export') {
    const output = resolve(ctx.app.cwd, invocation.output)
    const manifest = await asUsage(() => ctx.sessionAdmin.exportArchive(invocation.id, output))
    io.stderr.write(`dsh: session ${invocation.id}${countChildren(manifest.sessions)} exported to ${output}\n`)
    return 0
  }
  const manifest = await asUsage(() => ctx.sessionAdmin.importArchive(resolve(ctx.app.cwd, invocation.file)))
  io.stdout.write(`${manifest.session}\n`)
  io.stderr.write(
    `dsh: session ${manifest.session}${countChildren(manifest.sessions)} imported (dsh sessions show ${manifest.session})\n`,
  )
  return 0
}

const countChildren = (ids: readonly string[]) =>
  ids.length > 1 ? ` with ${ids.length - 1} subagent session${ids.length === 2 ? '' : 's'}` : ''

/** A bad title is the user's mistake: exit 2 with the message, no stack. */
async function asUsage<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if (error instanceof SessionAdminError) throw new UsageError(error.message)
    throw error
  }
}
