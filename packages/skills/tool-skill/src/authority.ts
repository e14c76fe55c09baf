import type { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import type { Session } from '@dsh/session'

/**
 * The session's secret-path rules for finding skills, so a SKILL.md linked to `~/.ssh/id_rsa` is refused as
 * the model's own read would be. Derived without recording anything (no probe, no network).
 */
export async function readAuthority(ctx: Context, session: Session): Promise<SandboxAuthority> {
  const paths = ctx.sandboxPolicy.pathRules(await ctx.sandboxPolicy.writableRoots(session))
  return { mode: ctx.sandboxPolicy.mode(session), writableRoots: [], paths }
}
