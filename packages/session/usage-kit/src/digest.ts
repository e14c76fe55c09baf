import { addTokens, sessionRequests, type RequestRecord, type TokenCounts } from './summary.ts'

/** One session's requests of one model on one UTC day, summed; `first`/`last` bound their times. */
export interface UsageBucket {
  model: string
  day: string
  first: number
  last: number
  requests: number
  tokens: TokenCounts
}

/**
 * A session's usage, small enough to keep beside its listing facts (meta.json): a report by model,
 * workspace or day, or since a time outside every bucket, adds these up without reading the log.
 */
export interface UsageDigest {
  buckets: UsageBucket[]
}

/** Bumped when the digest's shape or `sessionRequests` changes what it counts: a stored digest of another version is computed again. */
export const USAGE_DIGEST_VERSION = 'usage-1'

const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10)

export function usageDigest(events: readonly { type: string; seq?: number; time: number; data: any }[]): UsageDigest {
  const buckets = new Map<string, UsageBucket>()
  for (const record of sessionRequests('', '', events)) {
    const day = dayOf(record.time)
    const key = `${record.model}\n${day}`
    let bucket = buckets.get(key)
    if (!bucket)
      buckets.set(
        key,
        (bucket = {
          model: record.model,
          day,
          first: record.time,
          last: record.time,
          requests: 0,
          tokens: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 },
        }),
      )
    bucket.first = Math.min(bucket.first, record.time)
    bucket.last = Math.max(bucket.last, record.time)
    bucket.requests += record.requests
    addTokens(bucket.tokens, record.tokens)
  }
  return { buckets: [...buckets.values()] }
}

/**
 * The digest's requests as records of one session (one per bucket, at its first time), or undefined when
 * `since` falls inside a bucket: only the log can say which of its requests count then.
 */
export function digestRecords(
  digest: UsageDigest,
  sessionId: string,
  workspace: string,
  since: number | undefined,
): RequestRecord[] | undefined {
  const records: RequestRecord[] = []
  for (const bucket of digest.buckets) {
    if (since !== undefined && bucket.last < since) continue
    if (since !== undefined && bucket.first < since) return undefined
    records.push({
      sessionId,
      workspace,
      time: bucket.first,
      model: bucket.model,
      requests: bucket.requests,
      tokens: bucket.tokens,
    })
  }
  return records
}
