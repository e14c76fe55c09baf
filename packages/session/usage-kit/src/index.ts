export {
  cacheHitShare,
  cacheSavings,
  costOf,
  groupUsage,
  sessionRequests,
  totalUsage,
  GROUPINGS,
  type Grouping,
  type ModelPrice,
  type PriceTable,
  type RequestRecord,
  type TokenCounts,
  type UsageGroup,
} from './summary.ts'
export { formatCacheShare, lastTurnUsage, sessionUsage, type SessionUsage } from './session-usage.ts'
export {
  storedUsageSource,
  usageReport,
  type DigestStore,
  type UsageQuery,
  type UsageReport,
  type UsageSource,
} from './report.ts'
export { usageDigest, digestRecords, USAGE_DIGEST_VERSION, type UsageBucket, type UsageDigest } from './digest.ts'
