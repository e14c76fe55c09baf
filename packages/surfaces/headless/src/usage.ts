import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/settings'
import type { RunIO } from './run.ts'
import type { UsageInvocation } from './usage-options.ts'
import { groupUsage, sessionRequests, totalUsage, type ModelPrice, type PriceTable, type RequestRecord, type UsageGroup } from './usage-summary.ts'

declare module '@dsh/settings' {
  interface Settings {
    'usage.prices': PriceTable
  }
}

const usd = () => Schema.number().min(0)

/** A price table: `provider/model` → USD per million input, cached input, output (and optionally cache-write) tokens. */
export const PriceTableSchema: Schema<PriceTable> = Schema.dict(
  Schema.object({
    input: usd().required().description('USD per million input tokens (not read from or written to a cache).'),
    cachedInput: usd().required().description('USD per million input tokens read from the cache.'),
    output: usd().required().description('USD per million output tokens (reasoning included).'),
    cacheWrite: usd().description('USD per million input tokens written to the cache; absent: the input price.'),
  }) as Schema<ModelPrice>,
)

/** Declares `usage.prices` (read by `dsh usage`), defaulting to the row's config. */
export function defineUsageSettings(ctx: Context, prices: PriceTable): void {
  ctx.settings.define('usage.prices', PriceTableSchema.default(prices), {
    description: 'Prices of `dsh usage`: per `provider/model`, USD per million input, cachedInput, output (and cacheWrite) tokens. A model without a price shows its tokens and "no price".',
  })
}

/**
 * `dsh usage`: the logged usage of the stored sessions of this directory (or `--cwd`, or every workspace),
 * grouped and priced. A damaged session is reported on stderr (and in `--json`'s `damaged`), not counted.
 */
export async function showUsage(ctx: Context, invocation: UsageInvocation, io: RunIO): Promise<number> {
  const dir = invocation.allWorkspaces ? undefined : canonical(resolve(ctx.app.cwd, invocation.cwd ?? '.'))
  const damaged: { id: string; reason: string }[] = []
  const records: RequestRecord[] = []
  for (const summary of await ctx.sessions.list()) {
    if (dir !== undefined && canonical(summary.cwd) !== dir) continue
    if (summary.damaged) {
      damaged.push({ id: summary.id, reason: summary.damaged })
      continue
    }
    try {
      const { events } = await ctx.sessions.read(summary.id)
      records.push(...sessionRequests(summary.id, summary.cwd, events))
    } catch (error) {
      damaged.push({ id: summary.id, reason: error instanceof Error ? error.message : String(error) })
    }
  }
  const counted = invocation.since === undefined ? records : records.filter((record) => record.time >= invocation.since!)
  const groups = groupUsage(counted, invocation.by, ctx.settings.get('usage.prices'))
  const total = totalUsage(groups)
  const sessions = new Set(counted.map((record) => record.sessionId)).size
  if (invocation.json) {
    const scope = dir ?? 'all-workspaces'
    io.stdout.write(
      JSON.stringify({ scope, by: invocation.by, ...(invocation.since !== undefined ? { since: new Date(invocation.since).toISOString() } : {}), sessions, groups, total, damaged }) + '\n',
    )
  } else {
    const heading = `Usage of ${sessions} session${sessions === 1 ? '' : 's'} ${dir ? `in ${dir}` : 'in every workspace'}${invocation.sinceText ? ` since ${invocation.sinceText}` : ''}, by ${invocation.by}`
    const lines = [heading, ...groups.map((group) => usageRow(group.key, group)), usageRow('total', total)]
    io.stdout.write(lines.join('\n') + '\n')
  }
  for (const { id, reason } of damaged) io.stderr.write(`dsh: session ${id} is damaged and its usage is not counted: ${reason}\n`)
  return 0
}

function usageRow(key: string, group: Omit<UsageGroup, 'key'>): string {
  const cost = group.cost === null ? `no price (${group.unpriced.join(', ')})` : `$${group.cost.toFixed(4)}`
  return `${key}  ${group.requests} requests  input ${group.input}  cached ${group.cacheRead}  cache-write ${group.cacheWrite}  output ${group.output}  ${cost}`
}

/** Paths compare by their real location (a temp dir reached through a symlink is the same directory). */
function canonical(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
