// Recovery that always finds room (issue #18 part 1), on a real composition: the real DeepSeek adapter
// against the mock server, real bash (sandboxed), real spill store. The "provider" counts tokens more
// densely than dsh's estimate (2 characters a token) and refuses, in DeepSeek's words, a request past its
// real window, which is far smaller than the catalog's.
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import type { Harness } from '@dsh/test-harness'
import { useMockProvider } from './test-support/deepseek-mock.ts'
import type { MockReply, RecordedRequest } from '@dsh/llm-mock-server'
import { SessionView } from '@dsh/session-view'
import type {} from '@dsh/agent'
import type {} from '@dsh/compaction'

const REAL_WINDOW = 65_536
const PROVIDER_CHARS_PER_TOKEN = 2

const mock = useMockProvider(REAL_WINDOW)
let h: Harness | undefined

// About 49 KB of numbered lines: under the bash cap and spill-policy's threshold, so all of it is history.
const bigOutput = (tag: string) => `seq -f '${tag} line %06g of a long command output' 1 1100`

type Message = { role: string; content?: unknown; tool_calls?: unknown[] }
const messagesOf = (request: RecordedRequest): Message[] => request.body.messages
const lastText = (request: RecordedRequest) => String(messagesOf(request).at(-1)?.content ?? '')
const isSummary = (request: RecordedRequest) => lastText(request).includes('write a summary of the conversation so far')
const providerTokens = (request: RecordedRequest) =>
  Math.ceil(JSON.stringify(request.body.messages).length / PROVIDER_CHARS_PER_TOKEN)

/**
 * The provider: refuses past its real window; answers a summary request with a summary; otherwise runs
 * `commands` one per step for each user message, then answers.
 */
function provider(commandsPerTurn: number) {
  let refusals = 0
  mock.llm.respondWith((request): MockReply => {
    if (providerTokens(request) > REAL_WINDOW) {
      refusals++
      return { contextOverflow: true }
    }
    if (isSummary(request)) return { text: 'SUMMARY: the user asked for long command outputs; each was run.' }
    const messages = messagesOf(request)
    const sinceUser = messages.length - 1 - messages.map((message) => message.role).lastIndexOf('user')
    const callsThisTurn = messages
      .slice(messages.length - sinceUser)
      .filter((message) => message.role === 'assistant').length
    const turn = messages.filter((message) => message.role === 'user').length
    if (callsThisTurn < commandsPerTurn)
      return { toolCalls: [{ name: 'bash', arguments: { command: bigOutput(`t${turn}c${callsThisTurn}`) } }] }
    return { text: `turn ${turn} done` }
  })
  return () => refusals
}

const boot = mock.boot

test('three ~50 KB outputs that overflow the real window are relieved, the step is retried, and the turn completes', async () => {
  h = await boot()
  const refusals = provider(3)
  const result = await h.run('run three commands with long output')
  expect(result).toMatchObject({ reason: 'completed', text: expect.stringContaining('done') })
  expect(refusals()).toBeGreaterThanOrEqual(1)
  // The provider's stated window is learned, logged, and in force from the next request on.
  const learned = h.events('context/window')
  expect(learned).toHaveLength(1)
  expect(learned[0]!.data).toMatchObject({
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    contextWindow: REAL_WINDOW,
    source: 'provider-error',
  })
  expect(h.root.llm.describe({ provider: 'deepseek', model: 'deepseek-v4-flash' }).contextWindow).toBe(REAL_WINDOW)
  const after = h.events('request/context').filter((event) => event.seq > learned[0]!.seq)
  expect(after.length).toBeGreaterThan(0)
  for (const event of after) expect(event.data.contextWindow).toBe(REAL_WINDOW)
  // Recent results were shortened in place, each left readable whole through a spill file.
  const pruned = h.events('tool/pruned')
  expect(pruned.length).toBeGreaterThan(0)
  const handle = pruned[0]!.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
  const path = /saved at (\S+):/.exec(handle)![1]!
  const original = h.events('tool/result').find((event) => event.seq === pruned[0]!.data.seq)!
  expect(readFileSync(path, 'utf8')).toBe(
    original.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n'),
  )
  // Every request that went out after the relief fit the provider's window.
  const answered = mock.llm.requests.filter((request) => providerTokens(request) <= REAL_WINDOW)
  expect(answered.at(-1)!.index).toBe(mock.llm.requests.length - 1)
})

test('three successive overflows in one session each recover, and the session keeps the learned window', async () => {
  h = await boot()
  const refusals = provider(3)
  for (let turn = 0; turn < 3; turn++) {
    const before = refusals()
    const result = await h.run(`turn ${turn}: three more long commands`)
    expect(result.reason).toBe('completed')
    // Each turn's outputs pass the real window: the provider refuses, and the session recovers.
    expect(refusals()).toBeGreaterThan(before)
  }
  expect(h.events('turn/end').map((event) => event.data.reason)).toEqual(['completed', 'completed', 'completed'])
  expect(h.events('context/window')).toHaveLength(1)
  // Later turns relieve with the learned window (threshold × 65,536), not the catalog's 1,000,000.
  for (const event of h.events('compaction/start')) expect(event.data.window).toBe(REAL_WINDOW)
  expect(h.events('tool/pruned').length + h.events('compaction/end').length).toBeGreaterThanOrEqual(3)
  expect(h.events('context/relief-failed')).toHaveLength(0)
})

test('when nothing can be cut, the turn fails and the log says what was tried', async () => {
  h = await boot()
  // One user message alone over the window: no tool result to prune or shorten, no older turn to summarize.
  mock.llm.respondWith(() => ({ contextOverflow: true }))
  const result = await h.run(`please read this: ${'x'.repeat(20_000)}`)
  expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
  const [failed] = h.events('context/relief-failed')
  expect(failed!.data).toMatchObject({
    trigger: 'overflow',
    tried: ['nothing could be pruned, shortened or summarized'],
  })
  expect(failed!.data.reason).toMatch(
    /^nothing more could be cut \(about \d+ tokens for a target of \d+ in a 65536-token window\)$/,
  )
  // Every surface shows it (one display fold): what was tried, as a warning.
  const view = new SessionView()
  for (const event of h.events()) view.apply(event)
  const notices = view.items.filter((item) => item.kind === 'notice')
  expect(notices.map((item) => (item.kind === 'notice' ? [item.tone, item.text] : []))).toContainEqual([
    'warn',
    `No room could be made in the context: tried nothing could be pruned, shortened or summarized; ${failed!.data.reason}`,
  ])
})
