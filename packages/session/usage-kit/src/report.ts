import { groupUsage, sessionRequests, totalUsage, type Grouping, type PriceTable, type RequestRecord, type UsageGroup } from './summary.ts'

/** What a report reads sessions through: `ctx.sessions`' `list()` and `read()` (so this stays free of I/O of its own). */
export interface UsageSource {
  list(): Promise<readonly { id: string; cwd: string; damaged?: string }[]>
  read(id: string): Promise<{ events: readonly { type: string; seq?: number; time: number; data: any }[] }>
}

export interface UsageQuery {
  by: Grouping
  /** Only sessions whose workspace is this directory (compared by `sameDir`); absent: every workspace. */
  dir?: string
  /** Epoch milliseconds: only requests logged at or after it count. */
  since?: number
}

/** The report `dsh usage --json` prints and the web usage page shows (one shape, so they can be compared). */
export interface UsageReport {
  sessions: number
  groups: UsageGroup[]
  total: Omit<UsageGroup, 'key'>
  /** Sessions whose log could not be read: listed with the reason, never counted. */
  damaged: { id: string; reason: string }[]
}

/** Reads every session in scope and sums its logged usage, grouped and priced. */
export async function usageReport(source: UsageSource, query: UsageQuery, prices: PriceTable, sameDir: (a: string, b: string) => boolean = (a, b) => a === b): Promise<UsageReport> {
  const damaged: UsageReport['damaged'] = []
  const records: RequestRecord[] = []
  for (const summary of await source.list()) {
    if (query.dir !== undefined && !sameDir(summary.cwd, query.dir)) continue
    if (summary.damaged) {
      damaged.push({ id: summary.id, reason: summary.damaged })
      continue
    }
    try {
      const { events } = await source.read(summary.id)
      records.push(...sessionRequests(summary.id, summary.cwd, events))
    } catch (error) {
      damaged.push({ id: summary.id, reason: error instanceof Error ? error.message : String(error) })
    }
  }
  const counted = query.since === undefined ? records : records.filter((record) => record.time >= query.since!)
  const groups = groupUsage(counted, query.by, prices)
  return { sessions: new Set(counted.map((record) => record.sessionId)).size, groups, total: totalUsage(groups), damaged }
}
