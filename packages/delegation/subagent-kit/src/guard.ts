import { isAbsolute, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type {} from '@dsh/sandbox-policy'
import type { Session } from '@dsh/session'
import type {} from '@dsh/subagent'
import type { ToolInvocation } from '@dsh/tools'

/** The tools whose `path` argument is a write (their approval would widen the fence for one call). */
export interface GuardConfig {
  writeTools: string[]
}

/**
 * Why a child may not make this call, or undefined (docs/security.md: a child's authority is a ceiling). Checked
 * before every other pre-execute policy, so no approval, grant or allow rule can answer it: a tool its type
 * does not offer; below `danger-full-access`, a command asking to leave the sandbox or write `.git`; a write
 * the child's fence refuses (outside the writable roots or on a protected path), which a parent-less session
 * would ask about and, approved, widen for that call.
 */
export async function ceilingRefusal(
  ctx: Context,
  config: GuardConfig,
  invocation: ToolInvocation,
): Promise<string | undefined> {
  const session = invocation.context.session
  const link = session.last('subagent/parent')?.data
  const ceiling = ctx.sandboxPolicy.ceiling(session)
  if (!link && !ceiling) return undefined
  if (link?.tools && !link.tools.includes(invocation.name))
    return `the ${link.agentType} subagent may use only ${link.tools.join(', ') || 'no tools'}`
  if (!ceiling || ceiling === 'danger-full-access') return undefined
  const args = (invocation.arguments ?? {}) as Record<string, unknown>
  if (args.sandbox === false || args.writeGit === true)
    return `a subagent runs under the ceiling ${ceiling}: it cannot run a command outside the sandbox or with .git writable`
  if (config.writeTools.includes(invocation.name) && typeof args.path === 'string' && args.command !== 'view')
    return fenceRefusal(ctx, session, args.path, invocation.context.cwd, ceiling)
  return undefined
}

async function fenceRefusal(
  ctx: Context,
  session: Session,
  path: string,
  cwd: string,
  ceiling: string,
): Promise<string | undefined> {
  const file = isAbsolute(path) ? path : resolve(cwd, path)
  try {
    await ctx.fs.checkWrite(file, await ctx.sandboxPolicy.authority(session))
    return undefined
  } catch (error) {
    // Other refusals (a secret path, read-only mode) stand as the tool reports them.
    const reason = error instanceof FsError ? error.fence?.reason : undefined
    if (reason === 'outside' || reason === 'protected')
      return `a subagent runs under the ceiling ${ceiling}: "${path}" is ${reason === 'outside' ? 'outside its writable roots' : 'a protected path'}, and no approval can widen a subagent's authority`
    return undefined
  }
}
