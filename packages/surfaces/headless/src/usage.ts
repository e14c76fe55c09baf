import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import type { RunIO } from './run.ts'
import type { UsageInvocation } from './usage-options.ts'
import { formatCacheShare, storedUsageSource, usageReport, type UsageGroup } from '@dsh/usage-kit'
import type {} from '@dsh/usage-prices'

/**
 * `dsh usage`: the logged usage of the stored sessions of this directory (or `--cwd`, or every workspace),
 * grouped and priced. A damaged session is reported on stderr (and in `--json`'s `damaged`), not counted.
 */
export async function showUsage(ctx: Context, invocation: UsageInvocation, io: RunIO): Promise<number> {
  const dir = invocation.allWorkspaces ? undefined : canonical(resolve(ctx.app.cwd, invocation.cwd ?? '.'))
  const prices = ctx.usagePrices.table()
  const { sessions, groups, total, damaged } = await usageReport(
    // Not injected: a composition without persistence lists nothing anyway.
    storedUsageSource(ctx.sessions, ctx.get('sessionPersistence')),
    {
      by: invocation.by,
      ...(dir !== undefined ? { dir } : {}),
      ...(invocation.since !== undefined ? { since: invocation.since } : {}),
    },
    prices,
    (cwd, wanted) => canonical(cwd) === wanted,
  )
  if (invocation.json) {
    const scope = dir ?? 'all-workspaces'
    io.stdout.write(
      JSON.stringify({
        scope,
        by: invocation.by,
        ...(invocation.since !== undefined ? { since: new Date(invocation.since).toISOString() } : {}),
        sessions,
        groups,
        total,
        damaged,
      }) + '\n',
    )
  } else {
    const heading = `Usage of ${sessions} session${sessions === 1 ? '' : 's'} ${dir ? `in ${dir}` : 'in every workspace'}${invocation.sinceText ? ` since ${invocation.sinceText}` : ''}, by ${invocation.by}`
    const lines = [heading, ...groups.map((group) => usageRow(group.key, group)), usageRow('total', total)]
    io.stdout.write(lines.join('\n') + '\n')
  }
  for (const { id, reason } of damaged)
    io.stderr.write(`dsh: session ${id} is damaged and its usage is not counted: ${reason}\n`)
  return 0
}

function usageRow(key: string, group: Omit<UsageGroup, 'key'>): string {
  const cost = group.cost === null ? `no price (${group.unpriced.join(', ')})` : `$${group.cost.toFixed(4)}`
  // Reasoning is part of the output, shown only when a provider reported it.
  const reasoning = group.reasoning !== undefined ? ` (reasoning ${group.reasoning})` : ''
  const share = formatCacheShare(group.cacheHitShare)
  const saved = group.cacheSaved === null ? '' : `  cache saved $${group.cacheSaved.toFixed(4)}`
  return `${key}  ${group.requests} requests  input ${group.input}  cached ${group.cacheRead}${share ? ` (${share})` : ''}  cache-write ${group.cacheWrite}  output ${group.output}${reasoning}  ${cost}${saved}`
}

/** Paths compare by their real location (a temp dir reached through a symlink is the same directory). */
function canonical(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
