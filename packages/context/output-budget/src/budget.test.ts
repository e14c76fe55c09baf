// The minimal runtime's honesty about its window (issue #18 part 6): the real `--patch minimal`
// composition, the real DeepSeek adapter, the mock server; only the model is fake.
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import type {} from '@dsh/agent'

let llm: MockServer
let h: Harness | undefined
const saved = { ...process.env }
beforeAll(async () => {
  llm = await startMockServer()
  // The minimal patch reads these when it is composed.
  Object.assign(process.env, {
    DEEPSEEK_BASE_URL: llm.url,
    DSH_CONTEXT_WINDOW: '4000',
    DSH_SYSTEM_PROMPT: 'You are terse.',
  })
})
afterEach(async () => {
  await h?.dispose()
  h = undefined
  llm.reset()
})
afterAll(async () => {
  for (const key of ['DEEPSEEK_BASE_URL', 'DSH_CONTEXT_WINDOW', 'DSH_SYSTEM_PROMPT'])
    if (saved[key] === undefined) delete process.env[key]
  await llm.close()
})

async function boot(): Promise<Harness> {
  const harness = await bootComposition({ profile: 'sdk', patches: ['minimal'] })
  await harness.root.credentials.set('DEEPSEEK_API_KEY', 'sk-budget-test-key')
  return harness
}

test('with a 4,000-token window the minimal runtime asks for what the window has left, not the model’s 384,000', async () => {
  h = await boot()
  llm.enqueue({ text: 'short answer' })
  expect((await h.run('hello')).reason).toBe('completed')
  const sent = llm.requests[0]!.body
  expect(sent.max_tokens).toBeGreaterThan(1000)
  expect(sent.max_tokens).toBeLessThan(4000)
  // What was sent is what the log derives: the budget is in the logged header.
  expect(h.events('request/header').at(-1)!.data.sampling?.maxOutputTokens).toBe(sent.max_tokens)
})

test('a turn that fills the window ends with a clear reason and sends nothing', async () => {
  h = await boot()
  const result = await h.run(`summarize this: ${'word '.repeat(3000)}`)
  expect(result.reason).toBe('error')
  expect(result.error?.code).toBe('CONTEXT_WINDOW_FULL')
  expect(result.error?.message).toMatch(
    /^the conversation fills the model's context window: about \d+ of 4000 tokens are taken, leaving \d+ for an answer \(at least 1024 are needed\)/,
  )
  expect(h.events('turn/end').at(-1)!.data.error?.code).toBe('CONTEXT_WINDOW_FULL')
  expect(llm.requests).toHaveLength(0)
})
