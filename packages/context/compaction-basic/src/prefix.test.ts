// The provider's prompt cache (issue #29 part 5): each request extends the one before it byte for byte, so a
// provider that caches by prefix hits on everything already sent. Over a 200-step session with one
// compaction, on the wire the mock DeepSeek server sees: at most one prefix break, exactly at the compaction.
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Harness } from '@dsh/test-harness'
import { bootOnMock } from './test-support/deepseek-mock.ts'
import { startMockServer, type MockServer, type RecordedRequest } from '@dsh/llm-mock-server'
import type {} from '@dsh/agent'
import type {} from '@dsh/compaction'

const STEPS_PER_TURN = 50
const TURNS = 4

let llm: MockServer
let h: Harness
beforeAll(async () => {
  llm = await startMockServer()
  h = await bootOnMock(llm, {
    rows: "- insert:\n    - id: fixture-tools\n      name: '@dsh/test-harness/fixture-tools'",
    deepseekConfig: 'models: [{ id: deepseek-v4-flash, contextWindow: 56000, maxOutputTokens: 2000 }]',
  })
})
afterAll(async () => {
  await h?.dispose()
  await llm?.close()
})

const isSummary = (request: RecordedRequest) =>
  JSON.stringify(request.body.messages.at(-1)).includes('write a summary of the conversation so far')
const serialized = (request: RecordedRequest) =>
  (request.body.messages as unknown[]).map((message) => JSON.stringify(message))

test('over 200 steps with a compaction, each turn request extends the previous one byte for byte except once, at the compaction', async () => {
  let step = 0
  llm.respondWith((request) => {
    if (isSummary(request)) return { text: 'SUMMARY: the user asked for echoes; each was echoed.' }
    const last = request.body.messages.at(-1)
    if (last.role === 'tool' && step % STEPS_PER_TURN === 0) return { text: `turn done after ${step} steps` }
    step++
    return {
      toolCalls: [{ name: 'echo', arguments: { text: `step ${step}: ${'lorem ipsum dolor sit amet '.repeat(16)}` } }],
    }
  })
  for (let turn = 0; turn < TURNS; turn++)
    expect((await h.run(`turn ${turn}: echo ${STEPS_PER_TURN} times`)).reason).toBe('completed')
  expect(step).toBe(STEPS_PER_TURN * TURNS)
  expect(h.events('compaction/end').filter((event) => event.data.ok)).toHaveLength(1)

  const turnRequests = llm.requests.filter((request) => !isSummary(request))
  const afterSummary = llm.requests.findIndex(isSummary) + 1
  const breaks: number[] = []
  for (let i = 1; i < turnRequests.length; i++) {
    const before = turnRequests[i - 1]!
    const now = turnRequests[i]!
    // The tools come before the messages in the cached prefix: a change there is a break too (history_read
    // joins once something was summarized, so at the compaction).
    const sameTools = JSON.stringify(now.body.tools) === JSON.stringify(before.body.tools)
    const [a, b] = [serialized(before), serialized(now)]
    if (!sameTools || b.length < a.length || a.some((message, k) => b[k] !== message)) breaks.push(now.index)
  }
  expect(turnRequests.length).toBeGreaterThan(200)
  expect(breaks).toEqual([llm.requests[afterSummary]!.index])
})
