// Interrupted output is not history (issue #18 part 3): a real composition, the real DeepSeek adapter and a
// mock server that cuts or stalls the stream; only the model is fake.
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { SessionView } from '@dsh/session-view'
import { deriveMessages, planRepair, type SessionEvent } from './index.ts'

let llm: MockServer
let h: Harness | undefined
beforeAll(async () => {
  llm = await startMockServer()
})
afterEach(async () => {
  await h?.dispose()
  h = undefined
  llm.reset()
})
afterAll(() => llm.close())

const PARTIAL = 'PARTIAL-ANSWER-THAT-WAS-CUT'

const patch = () => `
- id: agents
  config: { route: { provider: deepseek, model: deepseek-v4-flash } }
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-retry
  config: { baseDelayMs: 0 }
`

async function boot(home?: string, workspace?: string): Promise<Harness> {
  const harness = await bootComposition({
    patch: patch(),
    ...(home ? { home } : {}),
    ...(workspace ? { workspace } : {}),
  })
  await harness.root.credentials.set('DEEPSEEK_API_KEY', 'sk-interrupted-test-key')
  return harness
}

const bodyText = (index: number) => JSON.stringify(llm.requests[index]!.body)

test("a cut stream's partial text is logged but absent from the retried request and every later one", async () => {
  h = await boot()
  llm.enqueue(
    { text: [PARTIAL.slice(0, 10), PARTIAL.slice(10), ' and more'], cutAfterChunks: 3 },
    { text: 'the whole answer' },
    { text: 'second turn' },
  )
  const first = await h.run('answer me')
  expect(first.reason).toBe('completed')
  // The cut attempt is in the log (the UI and the audit see it)…
  const cut = h.events('assistant/message')[0]!
  expect(JSON.stringify(cut.data.content)).toContain(PARTIAL.slice(0, 10))
  expect(cut.data.finish).toBe('error')
  // …but not in what the retry sends: one assistant answer per request, never two in a row.
  expect(llm.requests).toHaveLength(2)
  expect(bodyText(1)).not.toContain(PARTIAL.slice(0, 10))
  await h.run('and again')
  expect(bodyText(2)).not.toContain(PARTIAL.slice(0, 10))
  const roles = (llm.requests[2]!.body as { messages: { role: string }[] }).messages.map((message) => message.role)
  // The user's two messages (after the runtime context, itself a user message) and the one completed answer.
  expect(roles.filter((role) => role !== 'system').slice(-3)).toEqual(['user', 'assistant', 'user'])
  expect(roles.filter((role) => role === 'assistant')).toHaveLength(1)
})

test('a cancelled stream stays out of the request after resume, and the resumed view shows the interruption once', async () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-home-')))
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-ws-')))
  h = await boot(home, workspace)
  llm.enqueue({ text: [PARTIAL, ' still going'], stallAfterChunks: 3 })
  const agent = await h.agent()
  agent.followup('start answering')
  await llm.waitForRequests(1)
  while (!h.events('assistant/chunk').length) await new Promise((resolve) => setTimeout(resolve, 10))
  await agent.cancel()
  await agent.whenIdle()
  const sessionId = agent.session.id
  expect(h.events('assistant/message').at(-1)!.data.interrupted).toBe(true)
  await h.dispose()

  h = await boot(home, workspace)
  llm.enqueue({ text: 'fresh answer' })
  const resumed = await h.root.agents.resume(sessionId)
  resumed.followup('go on')
  expect((await resumed.whenIdle())!.reason).toBe('completed')
  expect(llm.requests).toHaveLength(2)
  expect(bodyText(1)).not.toContain(PARTIAL)
  const view = new SessionView()
  for (const event of resumed.session.events) view.apply(event)
  const shown = view.items.filter((item) => item.kind === 'assistant' && item.text.includes(PARTIAL))
  expect(shown).toHaveLength(1)
  expect(shown[0]).toMatchObject({ interrupted: true })
  await resumed.dispose()
})

test('a crash mid-stream is repaired as an interrupted answer whose text and calls are not history', () => {
  const events = [
    ['turn/start', { turnId: 't' }],
    ['step/start', { turnId: 't', step: 0 }],
    ['user/message', { content: [{ type: 'text', text: 'hi' }], source: 'user' }],
    ['assistant/chunk', { kind: 'text', text: PARTIAL }],
  ].map(([type, data], seq) => ({ type, data, seq, time: 0 })) as SessionEvent[]
  const repaired = [
    ...events,
    ...planRepair(events).map(([type, data], i) => ({ type, data, seq: events.length + i, time: 0 }) as SessionEvent),
  ]
  expect(repaired.some((event) => event.type === 'assistant/message')).toBe(true)
  expect(JSON.stringify(deriveMessages(repaired))).not.toContain(PARTIAL)
  // An answer cut after its calls: repair owes each call a result, and neither is history.
  const withCall = [
    ...events.slice(0, 3),
    {
      type: 'assistant/message',
      seq: 3,
      time: 0,
      data: {
        content: [{ type: 'tool-call', callId: 'c1', name: 'bash', arguments: {} }],
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        finish: 'aborted',
        interrupted: true,
      },
    },
  ] as SessionEvent[]
  const steps = planRepair(withCall)
  expect(steps.map(([type]) => type)).toContain('tool/result')
  const all = [
    ...withCall,
    ...steps.map(([type, data], i) => ({ type, data, seq: withCall.length + i, time: 0 }) as SessionEvent),
  ]
  expect(deriveMessages(all).map((message) => message.role)).toEqual(['user'])
})
