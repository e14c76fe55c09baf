import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { GrantError, type Grants } from '@dsh/grants'
import { UsageError } from '@dsh/cmdline'
import type { GrantsListInvocation, GrantsRevokeInvocation } from './options.ts'
import type { RunIO } from './run.ts'

function grantsOf(ctx: Context): Grants {
  const grants = ctx.get('grants') as Grants | undefined
  if (!grants) throw new Error('no grants row is mounted in this profile, so there are no grants to list or revoke')
  return grants
}

/**
 * `dsh grants list [--cwd <dir>] [--json]`: the "always" grants of a workspace (grants.yaml), the entries
 * ignored for want of dsh's integrity tag (with why), and the permission rules of the settings. `--json`
 * prints one object per grant or rule (an ignored one has `ignored: <reason>`).
 */
export async function listGrants(ctx: Context, invocation: GrantsListInvocation, io: RunIO): Promise<number> {
  const listing = await grantsOf(ctx).list(resolve(ctx.app.cwd, invocation.cwd ?? '.'))
  const rules = (['deny', 'ask', 'allow'] as const).flatMap((effect) =>
    listing.settings[effect].map((rule) => ({ effect, rule })),
  )
  if (invocation.json) {
    for (const grant of listing.always)
      io.stdout.write(JSON.stringify({ scope: 'workspace', workspace: listing.workspace, ...grant }) + '\n')
    for (const { grant, reason } of listing.ignored)
      io.stdout.write(
        JSON.stringify({ scope: 'workspace', workspace: listing.workspace, ...grant, ignored: reason }) + '\n',
      )
    for (const rule of rules) io.stdout.write(JSON.stringify({ scope: 'settings', ...rule }) + '\n')
    return 0
  }
  const lines = [`Grants of ${listing.workspace}`]
  if (!listing.always.length) lines.push('(no "always" grants in this workspace)')
  for (const grant of listing.always)
    lines.push(
      `${grant.id}  ${grant.rule}  always, by ${grant.actor} at ${grant.added}${grant.session ? ` in session ${grant.session}` : ''}`,
    )
  // Never applied: an entry dsh did not write claims its actor, it does not prove it (docs/security.md).
  for (const { grant, reason } of listing.ignored)
    lines.push(`${String(grant?.id)}  ${String(grant?.rule)}  IGNORED (claims ${String(grant?.actor)}): ${reason}`)
  for (const { effect, rule } of rules) lines.push(`setting permissions.${effect}  ${rule}`)
  io.stdout.write(lines.join('\n') + '\n')
  return 0
}

/** `dsh grants revoke <id|rule> [--cwd <dir>]`: removes the workspace's matching grants from grants.yaml. */
export async function revokeGrant(ctx: Context, invocation: GrantsRevokeInvocation, io: RunIO): Promise<number> {
  try {
    const removed = await grantsOf(ctx).revoke(invocation.target, {
      cwd: resolve(ctx.app.cwd, invocation.cwd ?? '.'),
      actor: 'user:cli-flag',
    })
    for (const grant of removed) io.stdout.write(`revoked ${grant.id}  ${grant.rule}\n`)
    return 0
  } catch (error) {
    // Naming a grant that is not there is a user mistake (exit 2), like an unknown session.
    if (error instanceof GrantError) throw new UsageError(error.message)
    throw error
  }
}
