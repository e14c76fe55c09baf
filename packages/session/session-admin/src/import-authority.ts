// Authority does not travel with an archive (DESIGN §8). A log's permission preset, sandbox mode, approval
// policy and session grants were chosen by a person on the machine that wrote it; resumed here they would
// apply again, so an archive someone sent could carry `danger-full-access` and a `bash(*)` grant into this
// home. Each imported session is given this home's default preset and has its session grants revoked,
// logged (actor `default`) before anyone can resume it. A ceiling (a subagent's) only lowers and is kept.
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/grants'
import type {} from '@dsh/permission-presets'

export async function resetImportedAuthority(ctx: Context, id: string): Promise<void> {
  const presets = ctx.get('permissionPresets')
  const grants = ctx.get('grants')
  if (!presets && !grants) return
  const session = await ctx.sessions.resume(id)
  try {
    presets?.set(session, presets.config.default, 'default')
    for (const grant of grants?.sessionGrants(session) ?? []) session.append('grant/revoked', { id: grant.id, rule: grant.rule, scope: grant.scope, actor: 'default' })
    await session.flush()
  } finally {
    await ctx.sessions.close(id)
  }
}
