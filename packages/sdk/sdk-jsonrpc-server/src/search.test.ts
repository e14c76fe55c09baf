// session/search against the real runtime (`dsh --profile sdk`, in-process: test-support/runtime.ts), on the real index.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { RPC_ERRORS } from '@dsh/sdk-protocol'
import { startInitialized, type Runtime } from './test-support/runtime.ts'

let llm: MockServer
let rt: Runtime | undefined
beforeAll(async () => void (llm = await startMockServer()))
beforeEach(() => llm.reset())
afterEach(async () => {
  await rt?.dispose()
  rt = undefined
})
afterAll(async () => llm.close())

const idle = (runtime: Runtime, sessionId: string) =>
  runtime.waitFor(
    () =>
      runtime
        .notifications('session.status')
        .some((m) => m.params.sessionId === sessionId && m.params.status === 'idle'),
    `idle of ${sessionId}`,
  )

test("session/search finds a session by the model's words, at the event that said them, with the match marked", async () => {
  llm.enqueue({ text: 'The flux capacitor is misaligned.' }, { text: 'Nothing to see.' })
  rt = await startInitialized({ llm })
  const { sessionId } = (await rt.request('session/new', {})).result
  await rt.request('session/prompt', { sessionId, content: 'why does it not start?' })
  await idle(rt, sessionId)
  const other = (await rt.request('session/new', {})).result.sessionId
  await rt.request('session/prompt', { sessionId: other, content: 'anything else?' })
  await idle(rt, other)
  const said = rt.events(sessionId, 'assistant/message')[0]
  const { hits } = (await rt.request('session/search', { query: 'capacitor misaligned' })).result
  expect(hits).toHaveLength(1)
  expect(hits[0]).toMatchObject({
    sessionId,
    seq: said.seq,
    source: 'assistant',
    firstPrompt: 'why does it not start?',
    cwd: rt.workspace,
  })
  const { text, highlights } = hits[0].snippet
  expect(highlights.map(({ start, end }: { start: number; end: number }) => text.slice(start, end))).toEqual([
    'capacitor',
    'misaligned',
  ])
  expect(
    (await rt.request('session/search', { query: '"flux" -* (' })).result.hits.map((hit: any) => hit.sessionId),
  ).toEqual([sessionId])
})

test('session/search refuses a missing query, an unknown field and a limit over the maximum, by field', async () => {
  rt = await startInitialized({ llm })
  expect((await rt.request('session/search', {})).error).toMatchObject({
    code: RPC_ERRORS.INVALID_PARAMS,
    data: { field: 'query' },
  })
  expect((await rt.request('session/search', { query: '' })).error).toMatchObject({
    code: RPC_ERRORS.INVALID_PARAMS,
    data: { field: 'query' },
  })
  expect((await rt.request('session/search', { query: 'x', offset: 20 })).error).toMatchObject({
    code: RPC_ERRORS.INVALID_PARAMS,
    data: { field: 'offset' },
  })
  expect((await rt.request('session/search', { query: 'x', limit: 0 })).error).toMatchObject({
    code: RPC_ERRORS.INVALID_PARAMS,
    data: { field: 'limit' },
  })
  expect((await rt.request('session/search', { query: 'x', limit: 100_000 })).error).toMatchObject({
    code: RPC_ERRORS.INVALID_PARAMS,
    data: { field: 'limit' },
  })
})
