import {
  addPriced,
  addTokens,
  cacheHitShare,
  emptyUsage,
  sessionRequests,
  type PriceTable,
  type TokenCounts,
} from './summary.ts'

/** One session's (or one run's, or one turn's) usage: what a result line, a session header and an ACP usage update show. */
export interface SessionUsage extends TokenCounts {
  requests: number
  /** USD; null when a request ran on a model the price table does not name. */
  cost: number | null
  /** Cached input tokens / all input tokens; null with no input (docs/architecture.md, "Usage and cost"). */
  cacheHitShare: number | null
  /** USD the provider's prompt cache saved (cache reads at the input price less their cached price); null when unpriced. */
  cacheSaved: number | null
  /** The `provider/model`s without a price. */
  unpriced: string[]
}

type Logged = { type: string; seq?: number; time: number; data: any }

/** Sums the requests logged at or after `fromSeq` (earlier events still set the route in force) and prices them. */
export function sessionUsage(events: readonly Logged[], prices: PriceTable, fromSeq = 0): SessionUsage {
  const usage: SessionUsage = emptyUsage()
  for (const record of sessionRequests('', '', events, fromSeq)) {
    usage.requests += record.requests
    addTokens(usage, record.tokens)
    addPriced(usage, record, prices)
  }
  usage.cacheHitShare = cacheHitShare(usage)
  return usage
}

/** The usage of the session's last turn (from its last `turn/start`; none yet: the whole log). */
export function lastTurnUsage(events: readonly Logged[], prices: PriceTable): SessionUsage {
  let from = 0
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === 'turn/start') {
      from = events[i]!.seq ?? i
      break
    }
  }
  return sessionUsage(events, prices, from)
}

/** A share as people read it: `73% cached`; empty with no input. */
export function formatCacheShare(share: number | null): string {
  return share === null ? '' : `${Math.round(share * 100)}% cached`
}
