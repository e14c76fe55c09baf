import { digestRecords, USAGE_DIGEST_VERSION, usageDigest, type UsageDigest } from './digest.ts'
import {
  groupUsage,
  sessionRequests,
  totalUsage,
  type Grouping,
  type PriceTable,
  type RequestRecord,
  type UsageGroup,
} from './summary.ts'

/** What a report reads sessions through: `ctx.sessions`' `list()` and `read()` (so this stays free of I/O of its own). */
export interface UsageSource {
  list(): Promise<readonly { id: string; cwd: string; damaged?: string }[]>
  read(id: string): Promise<{ events: readonly { type: string; seq?: number; time: number; data: any }[] }>
  /**
   * A session's usage digest, kept by the storage until its log changes (`derive` makes it from the log's
   * events when none is kept); absent: every log is read.
   */
  digest?(
    id: string,
    derive: (events: readonly { type: string; seq?: number; time: number; data: any }[]) => UsageDigest,
  ): Promise<UsageDigest>
}

/** What keeps the digests: the session persistence's `derived` (`@dsh/session-persistence`). */
export interface DigestStore {
  derived?<T>(id: string, name: string, version: string, derive: (events: readonly any[]) => T): Promise<T>
}

/**
 * The stored sessions as `dsh usage` and the web usage page read them: each one's digest kept by the storage
 * beside its listing facts where it can, so a report reads no log that has not changed since the last one.
 */
export function storedUsageSource(
  sessions: Pick<UsageSource, 'list' | 'read'>,
  store: DigestStore | undefined,
): UsageSource {
  const derived = store?.derived?.bind(store)
  return {
    list: () => sessions.list(),
    read: (id) => sessions.read(id),
    ...(derived ? { digest: (id, derive) => derived(id, 'usage', USAGE_DIGEST_VERSION, derive) } : {}),
  }
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

/** Sums the logged usage of every session in scope, grouped and priced: from its digest where the source keeps one, else from its log. */
export async function usageReport(
  source: UsageSource,
  query: UsageQuery,
  prices: PriceTable,
  sameDir: (a: string, b: string) => boolean = (a, b) => a === b,
): Promise<UsageReport> {
  const damaged: UsageReport['damaged'] = []
  const records: RequestRecord[] = []
  const inScope = (await source.list()).filter((summary) => query.dir === undefined || sameDir(summary.cwd, query.dir))
  // A few sessions at a time: each costs a small read or two with a digest, a whole log without.
  for (let start = 0; start < inScope.length; start += SESSIONS_AT_ONCE) {
    const batch = await Promise.all(
      inScope.slice(start, start + SESSIONS_AT_ONCE).map((summary) => sessionRecords(source, summary, query.since)),
    )
    for (const result of batch) {
      if ('reason' in result) damaged.push(result)
      else records.push(...result.records)
    }
  }
  const counted = query.since === undefined ? records : records.filter((record) => record.time >= query.since!)
  const groups = groupUsage(counted, query.by, prices)
  return {
    sessions: new Set(counted.map((record) => record.sessionId)).size,
    groups,
    total: totalUsage(groups),
    damaged,
  }
}

const SESSIONS_AT_ONCE = 16

async function sessionRecords(
  source: UsageSource,
  summary: { id: string; cwd: string; damaged?: string },
  since: number | undefined,
): Promise<{ records: RequestRecord[] } | { id: string; reason: string }> {
  if (summary.damaged) return { id: summary.id, reason: summary.damaged }
  try {
    const digested =
      source.digest && digestRecords(await source.digest(summary.id, usageDigest), summary.id, summary.cwd, since)
    return { records: digested ?? sessionRequests(summary.id, summary.cwd, (await source.read(summary.id)).events) }
  } catch (error) {
    return { id: summary.id, reason: error instanceof Error ? error.message : String(error) }
  }
}
