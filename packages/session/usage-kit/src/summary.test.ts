import { expect, test } from 'vitest'
import { cacheHitShare, cacheSavings, costOf, groupUsage, sessionRequests, totalUsage } from './summary.ts'
import { formatCacheShare, lastTurnUsage, sessionUsage } from './session-usage.ts'

const at = (time: number, type: string, data: any) => ({ type, time, data })
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
})

const events = [
  at(1, 'model/route', { route: { provider: 'deepseek', model: 'chat' } }),
  at(2, 'assistant/message', { content: [], usage: usage(100, 10, 50), finish: 'stop' }),
  at(3, 'request/context', { provider: 'anthropic', model: 'opus', contextWindow: 1000 }),
  at(4, 'assistant/message', { content: [], usage: usage(200, 20, 0, 30), finish: 'stop' }),
  at(5, 'compaction/end', { ok: true, requests: 2, usage: usage(500, 40) }),
  // What repair writes for a turn cut by a crash: no request reached a model.
  at(6, 'assistant/message', { content: [], usage: usage(0, 0), finish: 'aborted', interrupted: true }),
]

test('each request is counted under the route in force, and compaction summary requests count too', () => {
  const records = sessionRequests('s1', '/w', events)
  expect(records.map((record) => [record.model, record.requests, record.tokens.input])).toEqual([
    ['deepseek/chat', 1, 100],
    ['anthropic/opus', 1, 200],
    ['anthropic/opus', 2, 500],
  ])
})

test('groups are priced per request model; a group with an unpriced model has no cost', () => {
  const prices = { 'deepseek/chat': { input: 1, cachedInput: 0.1, output: 2 } }
  const groups = groupUsage(sessionRequests('s1', '/w', events), 'model', prices)
  expect(groups.map((group) => [group.key, group.requests, group.input, group.cacheWrite])).toEqual([
    ['anthropic/opus', 3, 700, 30],
    ['deepseek/chat', 1, 100, 0],
  ])
  expect(groups[1]!.cost).toBeCloseTo((100 * 1 + 50 * 0.1 + 10 * 2) / 1e6, 15)
  expect(groups[0]).toMatchObject({ cost: null, unpriced: ['anthropic/opus'] })
  expect(totalUsage(groups)).toMatchObject({
    requests: 4,
    input: 800,
    output: 70,
    cost: null,
    unpriced: ['anthropic/opus'],
  })
})

test('cache writes cost the cacheWrite price, or the input price without one', () => {
  const tokens = { input: 0, cacheRead: 0, cacheWrite: 1_000_000, output: 0 }
  expect(costOf(tokens, { input: 3, cachedInput: 0.3, output: 15 })).toBe(3)
  expect(costOf(tokens, { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 })).toBe(3.75)
  expect(costOf(tokens, undefined)).toBeNull()
})

test("a session's title request counts on the route it logged; one refused before it was sent does not", () => {
  const titled = [
    at(1, 'request/context', { provider: 'anthropic', model: 'opus', contextWindow: 1000 }),
    at(2, 'assistant/message', { content: [], usage: usage(100, 10), finish: 'stop' }),
    at(3, 'title/request', {
      route: { provider: 'anthropic', model: 'haiku' },
      system: 's',
      prompt: 'p',
      maxOutputTokens: 32,
    }),
    at(4, 'title/response', { requestSeq: 2, ok: true, title: 'T', usage: usage(30, 5) }),
    at(5, 'title/request', {
      route: { provider: 'anthropic', model: 'haiku' },
      system: 's',
      prompt: 'p',
      maxOutputTokens: 32,
    }),
    at(6, 'title/response', { requestSeq: 4, ok: false, reason: 'refused', usage: usage(0, 0) }),
  ]
  expect(
    sessionRequests('s1', '/w', titled).map((record) => [
      record.model,
      record.requests,
      record.tokens.input,
      record.tokens.output,
    ]),
  ).toEqual([
    ['anthropic/opus', 1, 100, 10],
    ['anthropic/haiku', 1, 30, 5],
  ])
})

test('reasoning tokens are summed where a provider reported them, and absent (not 0) where none did', () => {
  const logged = [
    at(1, 'model/route', { route: { provider: 'deepseek', model: 'chat' } }),
    at(2, 'assistant/message', { content: [], usage: { ...usage(10, 40), reasoning: 30 }, finish: 'stop' }),
    at(3, 'assistant/message', { content: [], usage: usage(10, 5), finish: 'stop' }),
    at(4, 'request/context', { provider: 'anthropic', model: 'opus', contextWindow: 1000 }),
    at(5, 'assistant/message', { content: [], usage: usage(10, 7), finish: 'stop' }),
  ]
  const groups = groupUsage(sessionRequests('s1', '/w', logged), 'model', {})
  expect(groups.map((group) => [group.key, group.output, group.reasoning])).toEqual([
    ['anthropic/opus', 7, undefined],
    ['deepseek/chat', 45, 30],
  ])
  expect(totalUsage(groups)).toMatchObject({ output: 52, reasoning: 30 })
  expect(totalUsage(groups.slice(0, 1))).not.toHaveProperty('reasoning')
})

test('the cache-hit share is cache reads over all input, and the cache saved the reads at the input price less the cached one', () => {
  const price = { input: 2, cachedInput: 0.5, output: 8 }
  expect(cacheHitShare({ input: 250, cacheRead: 700, cacheWrite: 50, output: 9 })).toBe(0.7)
  expect(cacheHitShare({ input: 0, cacheRead: 0, cacheWrite: 0, output: 9 })).toBeNull()
  expect(cacheSavings({ input: 250, cacheRead: 700, cacheWrite: 50, output: 9 }, price)).toBeCloseTo(
    (700 * 1.5) / 1e6,
    15,
  )
  expect(cacheSavings({ input: 1, cacheRead: 1, cacheWrite: 0, output: 0 }, undefined)).toBeNull()
  // Per turn and per session, from the same log; an unpriced model makes the money null, not zero.
  const events = [
    { type: 'request/context', seq: 0, time: 0, data: { provider: 'p', model: 'm' } },
    { type: 'turn/start', seq: 1, time: 0, data: { turnId: 't1' } },
    {
      type: 'assistant/message',
      seq: 2,
      time: 0,
      data: { usage: { input: 1000, cacheRead: 0, cacheWrite: 0, output: 10 } },
    },
    { type: 'turn/start', seq: 3, time: 0, data: { turnId: 't2' } },
    {
      type: 'assistant/message',
      seq: 4,
      time: 0,
      data: { usage: { input: 100, cacheRead: 900, cacheWrite: 0, output: 10 } },
    },
  ]
  const session = sessionUsage(events, { 'p/m': price })
  expect(session.cacheHitShare).toBe(900 / 2000)
  expect(session.cacheSaved).toBeCloseTo((900 * 1.5) / 1e6, 15)
  const turn = lastTurnUsage(events, { 'p/m': price })
  expect(turn).toMatchObject({ requests: 1, cacheHitShare: 0.9 })
  expect(sessionUsage(events, {})).toMatchObject({
    cost: null,
    cacheSaved: null,
    cacheHitShare: 900 / 2000,
    unpriced: ['p/m'],
  })
  expect(formatCacheShare(0.9)).toBe('90% cached')
  expect(formatCacheShare(null)).toBe('')
})

test('a digest sums requests per model and UTC day; a since inside a bucket asks for the log', async () => {
  const { digestRecords, usageDigest } = await import('./digest.ts')
  const day = 86_400_000
  const digest = usageDigest([
    at(1, 'model/route', { route: { provider: 'deepseek', model: 'chat' } }),
    at(10, 'assistant/message', { content: [], usage: usage(100, 10), finish: 'stop' }),
    at(20, 'assistant/message', { content: [], usage: usage(50, 5), finish: 'stop' }),
    at(day + 5, 'assistant/message', { content: [], usage: usage(7, 1), finish: 'stop' }),
  ])
  expect(
    digest.buckets.map((bucket) => [
      bucket.model,
      bucket.day,
      bucket.first,
      bucket.last,
      bucket.requests,
      bucket.tokens.input,
    ]),
  ).toEqual([
    ['deepseek/chat', '1970-01-01', 10, 20, 2, 150],
    ['deepseek/chat', '1970-01-02', day + 5, day + 5, 1, 7],
  ])
  expect(digestRecords(digest, 's', '/w', undefined)?.map((record) => record.requests)).toEqual([2, 1])
  expect(digestRecords(digest, 's', '/w', 21)?.map((record) => record.requests)).toEqual([1]) // after the first day's last request
  expect(digestRecords(digest, 's', '/w', 15)).toBeUndefined() // between two requests of one bucket: only the log knows
})
