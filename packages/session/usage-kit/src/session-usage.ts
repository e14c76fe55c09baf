import { addTokens, costOf, sessionRequests, type PriceTable, type TokenCounts } from './summary.ts'

/** One session's (or one run's) usage: what a result line, a session header and an ACP usage update show. */
export interface SessionUsage extends TokenCounts {
  requests: number
  /** USD; null when a request ran on a model the price table does not name. */
  cost: number | null
  /** The `provider/model`s without a price. */
  unpriced: string[]
}

/** Sums the requests logged at or after `fromSeq` (earlier events still set the route in force) and prices them. */
export function sessionUsage(events: readonly { type: string; seq?: number; time: number; data: any }[], prices: PriceTable, fromSeq = 0): SessionUsage {
  const usage: SessionUsage = { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, cost: 0, unpriced: [] }
  for (const record of sessionRequests('', '', events, fromSeq)) {
    usage.requests += record.requests
    addTokens(usage, record.tokens)
    const priced = costOf(record.tokens, prices[record.model])
    if (priced === null) {
      usage.cost = null
      if (!usage.unpriced.includes(record.model)) usage.unpriced.push(record.model)
    } else if (usage.cost !== null) usage.cost += priced
  }
  return usage
}
