// Usage and cost from logged events (issue 17 §4). Pure: a session's events in, request records out; records
// and a price table in, groups out. No I/O, so every surface (headless, web host, ACP) reuses it on the same events.

/** Token counts as the log keeps them (`@dsh/llm` Usage: `input` excludes cache reads and writes). */
export interface TokenCounts {
  input: number
  cacheRead: number
  cacheWrite: number
  output: number
  /** The reasoning part of `output`; absent when no request summed here reported one (not 0). */
  reasoning?: number
}

/** One model request as logged: an `assistant/message`, or the requests summed in a `compaction/end`. */
export interface RequestRecord {
  sessionId: string
  workspace: string
  /** Epoch milliseconds of the event that logged the usage. */
  time: number
  /** `provider/model` of the route in force when the request was made; `unknown` before any route is logged. */
  model: string
  requests: number
  tokens: TokenCounts
}

/** USD per million tokens. `cacheWrite` is optional: absent, cache writes are charged at the `input` price. */
export interface ModelPrice {
  input: number
  cachedInput: number
  output: number
  cacheWrite?: number
}

export type PriceTable = Record<string, ModelPrice>

export const GROUPINGS = ['model', 'workspace', 'day'] as const
export type Grouping = (typeof GROUPINGS)[number]

export interface UsageGroup extends TokenCounts {
  key: string
  requests: number
  /** USD; null when a request in the group ran on a model the price table does not name. */
  cost: number | null
  /** Cached input tokens / all input tokens (`cacheHitShare`); null with no input. */
  cacheHitShare: number | null
  /** USD the provider's cache saved (`cacheSavings`); null when a request ran on a model without a price. */
  cacheSaved: number | null
  /** The `provider/model`s of the group without a price. */
  unpriced: string[]
}

interface LoggedEvent {
  type: string
  seq?: number
  time: number
  data: any
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0)

function tokensOf(usage: any): TokenCounts {
  const reasoning = usage?.reasoning
  return {
    input: count(usage?.input),
    cacheRead: count(usage?.cacheRead),
    cacheWrite: count(usage?.cacheWrite),
    output: count(usage?.output),
    ...(typeof reasoning === 'number' && Number.isFinite(reasoning) ? { reasoning } : {}),
  }
}

/** Adds `tokens` into `sums`; reasoning only when reported, so a sum of unreported counts stays absent. */
export function addTokens(sums: TokenCounts, tokens: TokenCounts): void {
  sums.input += tokens.input
  sums.cacheRead += tokens.cacheRead
  sums.cacheWrite += tokens.cacheWrite
  sums.output += tokens.output
  if (tokens.reasoning !== undefined) sums.reasoning = (sums.reasoning ?? 0) + tokens.reasoning
}

/**
 * Every model request of one session with its usage. The model is the route in force: the last
 * `request/context` (what the request was sent to) or, before one, the last `model/route`. Compaction's
 * summary requests count too (`compaction/end` carries their number and summed usage). `fromSeq` counts only
 * the requests logged at or after that seq. A session's title request counts too (`title/response`, on the
 * route its `title/request` logged).
 */
export function sessionRequests(
  sessionId: string,
  workspace: string,
  events: readonly LoggedEvent[],
  fromSeq = 0,
): RequestRecord[] {
  let model = 'unknown'
  /** The route of the last title request (`@dsh/session-admin`): an auxiliary call, maybe on a cheaper model. */
  let titleModel: string | undefined
  const records: RequestRecord[] = []
  for (const event of events) {
    // Earlier events still set the route in force; only their requests are left out (a resumed run's own usage).
    const counted = (event.seq ?? Infinity) >= fromSeq
    if (event.type === 'request/context') model = `${event.data.provider}/${event.data.model}`
    else if (event.type === 'model/route') model = `${event.data.route.provider}/${event.data.route.model}`
    else if (event.type === 'title/request') titleModel = `${event.data.route.provider}/${event.data.route.model}`
    else if (!counted) continue
    else if (event.type === 'assistant/message') {
      const tokens = tokensOf(event.data.usage)
      // A turn repaired after a crash logs an interrupted message with no usage: no request reached a model.
      if (event.data.interrupted && !tokens.input && !tokens.cacheRead && !tokens.cacheWrite && !tokens.output) continue
      records.push({ sessionId, workspace, time: event.time, model, requests: 1, tokens })
    } else if (event.type === 'compaction/end' && count(event.data?.requests) > 0) {
      records.push({
        sessionId,
        workspace,
        time: event.time,
        model,
        requests: count(event.data.requests),
        tokens: tokensOf(event.data.usage),
      })
    } else if (event.type === 'title/response') {
      const tokens = tokensOf(event.data?.usage)
      // A title request refused at the boundary or never answered reached no model and cost nothing.
      if (event.data?.ok || tokens.input || tokens.cacheRead || tokens.cacheWrite || tokens.output)
        records.push({ sessionId, workspace, time: event.time, model: titleModel ?? model, requests: 1, tokens })
    }
  }
  return records
}

/** USD of some tokens at a price, or null without one. */
export function costOf(tokens: TokenCounts, price: ModelPrice | undefined): number | null {
  if (!price) return null
  const perToken = (usdPerMillion: number) => usdPerMillion / 1_000_000
  return (
    tokens.input * perToken(price.input) +
    tokens.cacheRead * perToken(price.cachedInput) +
    tokens.cacheWrite * perToken(price.cacheWrite ?? price.input) +
    tokens.output * perToken(price.output)
  )
}

/**
 * The share of input the provider read from its prompt cache: cache reads over all input tokens (uncached,
 * cache reads and cache writes), as the providers report them (DeepSeek `prompt_cache_hit_tokens`, Anthropic
 * `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens`). Null when there was no input.
 */
export function cacheHitShare(tokens: TokenCounts): number | null {
  const all = tokens.input + tokens.cacheRead + tokens.cacheWrite
  return all > 0 ? tokens.cacheRead / all : null
}

/** USD the cache saved: the cache reads at the input price less what they cost at the cached price; null without a price. */
export function cacheSavings(tokens: TokenCounts, price: ModelPrice | undefined): number | null {
  if (!price) return null
  return (tokens.cacheRead * Math.max(0, price.input - price.cachedInput)) / 1_000_000
}

/** Adds one priced record's cost and savings into sums that turn null at the first unpriced model. */
export function addPriced(
  sums: { cost: number | null; cacheSaved: number | null; unpriced: string[] },
  record: RequestRecord,
  prices: PriceTable,
): void {
  const price = prices[record.model]
  const cost = costOf(record.tokens, price)
  if (cost === null) {
    sums.cost = null
    sums.cacheSaved = null
    if (!sums.unpriced.includes(record.model)) sums.unpriced.push(record.model)
    return
  }
  if (sums.cost !== null) sums.cost += cost
  if (sums.cacheSaved !== null) sums.cacheSaved += cacheSavings(record.tokens, price)!
}

function keyOf(record: RequestRecord, by: Grouping): string {
  if (by === 'model') return record.model
  if (by === 'workspace') return record.workspace
  return new Date(record.time).toISOString().slice(0, 10)
}

/** Sums records into groups (sorted by key) priced per request's model. */
export function groupUsage(records: readonly RequestRecord[], by: Grouping, prices: PriceTable): UsageGroup[] {
  const groups = new Map<string, UsageGroup>()
  for (const record of records) {
    const key = keyOf(record, by)
    const group = groups.get(key) ?? { key, ...emptyUsage() }
    groups.set(key, group)
    addInto(group, record)
    addPriced(group, record, prices)
  }
  for (const group of groups.values()) group.cacheHitShare = cacheHitShare(group)
  return [...groups.values()].sort((a, b) => a.key.localeCompare(b.key))
}

/** Nothing counted yet: no requests, no tokens, nothing unpriced (cost and savings start at 0, the share at null). */
export function emptyUsage(): Omit<UsageGroup, 'key'> {
  return {
    requests: 0,
    input: 0,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    cost: 0,
    cacheHitShare: null,
    cacheSaved: 0,
    unpriced: [],
  }
}

/** The sum of groups, priced only when every group is. */
export function totalUsage(groups: readonly UsageGroup[]): Omit<UsageGroup, 'key'> {
  const total: Omit<UsageGroup, 'key'> = emptyUsage()
  for (const group of groups) {
    total.requests += group.requests
    addTokens(total, group)
    total.cost = total.cost === null || group.cost === null ? null : total.cost + group.cost
    total.cacheSaved =
      total.cacheSaved === null || group.cacheSaved === null ? null : total.cacheSaved + group.cacheSaved
    for (const model of group.unpriced) if (!total.unpriced.includes(model)) total.unpriced.push(model)
  }
  total.cacheHitShare = cacheHitShare(total)
  return total
}

function addInto(group: UsageGroup, record: RequestRecord): void {
  group.requests += record.requests
  addTokens(group, record.tokens)
}
