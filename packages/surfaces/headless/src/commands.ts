import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { AUDITED_KINDS, auditSession, renderAudit } from '@dsh/audit'
import type { Context } from '@dsh/cordis'
import { UsageError } from '@dsh/cmdline'
import type { Config } from './config.ts'
import { jsonLine } from './json-lines.ts'
import type { ListInvocation, ShowInvocation } from './options.ts'
import type { RunIO } from './run.ts'
import { sessionRow } from './text.ts'
import { headerLines, transcriptLines } from './transcript.ts'

/**
 * `dsh sessions list [--cwd <dir> | --all] [--archived] [--json]`: the sessions of a directory, most recent
 * first; archived ones only with `--archived`.
 */
export async function listSessions(
  ctx: Context,
  config: Config,
  invocation: ListInvocation,
  io: RunIO,
): Promise<number> {
  if (invocation.all && invocation.cwd !== undefined) throw new UsageError('--all and --cwd cannot be combined')
  const dir = invocation.all ? undefined : canonical(resolve(ctx.app.cwd, invocation.cwd ?? '.'))
  const sessions = (await ctx.sessions.list()).filter(
    (summary) => (dir === undefined || canonical(summary.cwd) === dir) && (invocation.archived || !summary.archived),
  )
  for (const summary of sessions) {
    if (invocation.json) io.stdout.write(JSON.stringify(summary) + '\n')
    else io.stdout.write(`${sessionRow(summary, config.titleChars)}${invocation.all ? `  ${summary.cwd}` : ''}\n`)
    if (summary.damaged && !invocation.json)
      io.stderr.write(`dsh: session ${summary.id} is damaged and cannot be resumed: ${summary.damaged}\n`)
  }
  if (!sessions.length && !invocation.json) io.stderr.write(`dsh: no sessions${dir ? ` in ${dir}` : ''}\n`)
  return 0
}

/**
 * `dsh sessions show <id> [--audit] [--json]`: the transcript, or (`--audit`, from `@dsh/audit`) every
 * authority change, sandbox probe, approval request and decision. `--json` prints the events themselves in
 * the `--json` line shape (with `--audit`, only the audited ones).
 */
export async function showSession(
  ctx: Context,
  config: Config,
  invocation: ShowInvocation,
  io: RunIO,
): Promise<number> {
  const { header, events } = await ctx.sessions.read(invocation.id)
  if (invocation.json) {
    const audited = new Set<string>(AUDITED_KINDS)
    for (const event of events)
      if (!invocation.audit || audited.has(event.type)) io.stdout.write(jsonLine(header.id, event))
    return 0
  }
  if (invocation.audit) {
    io.stdout.write([...headerLines(header), '', renderAudit(auditSession(events))].join('\n'))
    return 0
  }
  const body = transcriptLines(events, { previewChars: config.previewChars })
  io.stdout.write([...headerLines(header), '', ...(body.length ? body : ['(no messages)']), ''].join('\n'))
  return 0
}

/** Paths compare by their real location (a temp dir reached through a symlink is the same directory). */
function canonical(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
