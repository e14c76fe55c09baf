// Authority does not travel with an archive (docs/security.md). A log's permission preset, sandbox mode, approval
// policy and session grants were chosen by a person on the machine that wrote it; resumed here they would
// apply again, so an archive someone sent could carry `danger-full-access` and a `bash(*)` grant into this
// home. Each imported session is given this home's default preset and has its session grants revoked,
// logged (actor `default`) before anyone can resume it. A ceiling (a subagent's) only lowers and is kept.
import { realpathSync } from 'node:fs'
import { relative, isAbsolute } from 'node:path'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/app'
import type {} from '@dsh/grants'
import type {} from '@dsh/permission-presets'
import { SessionAdminError } from './errors.ts'

const real = (path: string): string | undefined => {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}
const inside = (path: string, root: string) => {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/**
 * A session's workspace is where a resume may write (workspace-write): an archive names it, so an archive
 * someone sent could name `~/.config/autostart` or `/`. The person importing accepts it by running the import
 * from that very folder (the launch folder); a child's must be inside its parent's. Throws, naming the folder.
 */
export function checkImportedWorkspaces(
  ctx: Context,
  file: string,
  sessions: { id: string; cwd: string; top: boolean }[],
  topCwd: string,
): void {
  const launched = ctx.app.cwd ? real(ctx.app.cwd) : undefined
  const top = real(topCwd)
  for (const session of sessions) {
    const cwd = real(session.cwd)
    if (!cwd)
      throw new SessionAdminError(
        'ARCHIVE_WORKSPACE',
        `${file}: session ${session.id} works in ${session.cwd}, which does not exist here; nothing was imported`,
      )
    const accepted = session.top ? cwd === launched : !!top && inside(cwd, top)
    if (!accepted)
      throw new SessionAdminError(
        'ARCHIVE_WORKSPACE',
        session.top
          ? `${file}: session ${session.id} works in ${cwd}; run the import from that folder to accept it as the session's workspace (nothing was imported)`
          : `${file}: the subagent session ${session.id} works in ${cwd}, outside its parent's workspace ${top}; nothing was imported`,
      )
  }
}

export async function resetImportedAuthority(ctx: Context, id: string): Promise<void> {
  const presets = ctx.get('permissionPresets')
  const grants = ctx.get('grants')
  if (!presets && !grants) return
  const session = await ctx.sessions.resume(id)
  try {
    presets?.set(session, presets.config.default, 'default')
    for (const grant of grants?.sessionGrants(session) ?? [])
      session.append('grant/revoked', { id: grant.id, rule: grant.rule, scope: grant.scope, actor: 'default' })
    await session.flush()
  } finally {
    await ctx.sessions.close(id)
  }
}
