import { dirname } from 'node:path'
import type {} from '@dsh/approval'
import { evaluateRules } from '@dsh/authority-rules'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/grants'
import type {} from '@dsh/sandbox-policy'
import type { Session } from '@dsh/session'

// A write the authority refuses for where it lands (outside the writable roots, or on a protected path) is
// asked about instead, when a person can answer (docs/security.md). Secret paths and the read-only mode are never
// asked about: those refusals stand. The approval itself is in the log (approval/asked + approval/decided).

/** Why writing `file` needs a person's approval, or undefined when it does not (allowed, or refused outright). */
export async function writeApprovalReason(
  ctx: Context,
  file: string,
  authority: SandboxAuthority,
): Promise<string | undefined> {
  if (!ctx.get('approval')?.canAsk) return undefined
  try {
    await ctx.fs.checkWrite(file, authority)
    return undefined
  } catch (error) {
    const fence = error instanceof FsError ? error.fence : undefined
    if (fence?.reason === 'outside')
      return `it writes "${file}", outside the writable roots (${authority.writableRoots.join(', ') || 'none'}); approved, this one call may write that file`
    if (fence?.reason === 'protected')
      return `it writes "${file}", a protected path (rule ${fence.rule}) that programs outside the sandbox run or obey; approved, this one call may write it`
    return undefined
  }
}

/**
 * Whether the log shows this call was asked about and allowed: an `approval/asked` naming the call, then its
 * `approval/decided` with an allowing answer (`allow_once`, or any later `allow_…` kind such as a grant's).
 */
export function approvedInLog(session: Session, callId: string): boolean {
  const asked = new Set<string>()
  for (const event of session.events) {
    if (event.type === 'approval/asked' && (event.data as { callId?: string }).callId === callId)
      asked.add((event.data as { requestId: string }).requestId)
    if (event.type === 'approval/decided') {
      const decided = event.data as { requestId: string; answer: string }
      if (asked.has(decided.requestId) && decided.answer.startsWith('allow')) return true
    }
  }
  return false
}

/**
 * The authority of an approved write of `file`: the session's, widened by exactly what refused it (the
 * file's folder as a writable root, or the protected rule lifted), for this call only.
 */
export async function approvedAuthority(
  ctx: Context,
  file: string,
  authority: SandboxAuthority,
): Promise<SandboxAuthority> {
  let current = authority
  for (let widened = 0; widened < 2; widened++) {
    try {
      await ctx.fs.checkWrite(file, current)
      return current
    } catch (error) {
      const fence = error instanceof FsError ? error.fence : undefined
      if (fence?.reason === 'outside')
        current = { ...current, writableRoots: [...current.writableRoots, dirname(await ctx.fs.realpath(file))] }
      else if (fence?.reason === 'protected' && current.paths)
        current = {
          ...current,
          paths: { ...current.paths, protect: current.paths.protect.filter((rule) => rule.rule !== fence.rule) },
        }
      else return current
    }
  }
  return current
}

/**
 * Whether a standing allow rule (ctx.grants: settings, session and workspace grants) covers this write: such a
 * rule answered the question the call would have asked (`tools/pre-execute`), so it widens like an approval.
 */
async function grantedWrite(ctx: Context, file: string, kind: 'write' | 'edit', session: Session): Promise<boolean> {
  const grants = ctx.get('grants')
  if (!grants) return false
  const subject = { kind, value: await ctx.fs.realpath(file), cwd: await ctx.fs.realpath(session.cwd) }
  return evaluateRules(await grants.rules(session), subject)?.effect === 'allow'
}

/**
 * The authority a write call of `file` (a `write`, or an `edit` of an existing file) acts under: widened only
 * when the log shows the call was approved, or a standing allow rule covers it.
 */
export async function writeAuthority(
  ctx: Context,
  file: string,
  kind: 'write' | 'edit',
  session: Session,
  callId: string,
): Promise<SandboxAuthority> {
  const authority = await ctx.sandboxPolicy.authority(session)
  return approvedInLog(session, callId) || (await grantedWrite(ctx, file, kind, session))
    ? approvedAuthority(ctx, file, authority)
    : authority
}
