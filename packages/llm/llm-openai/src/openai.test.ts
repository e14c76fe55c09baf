import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { bootComposition, ECHO_TOOL, type Harness, streamOnce, WITHOUT_RUNTIME_CONTEXT } from '@dsh/test-harness'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import type { EventKind } from '@dsh/session'
import type { LlmRequest } from '@dsh/llm'
import type {} from '@dsh/agent'

const KEY = 'sk-dsh-openai-test-5b1e0d77'

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

interface BootOptions {
  openai?: string
  retry?: string
  route?: string
  /** Store the key through ctx.credentials after boot (default true). */
  key?: boolean
}

async function boot(options: BootOptions = {}): Promise<Harness> {
  // These tests compare the wire requests exactly: no runtime context.
  const patch = `
- insert:
    - id: fixture-tools
      name: '@dsh/test-harness/fixture-tools'
${WITHOUT_RUNTIME_CONTEXT}- id: agents
  config: { route: ${options.route ?? '{ provider: openai, model: gpt-test }'} }
- id: llm-openai
  config: ${options.openai ?? `{ baseUrl: '${llm.url}/v1' }`}
- id: llm-retry
  config: ${options.retry ?? '{ maxRetries: 0 }'}
`
  h = await bootComposition({ patch })
  if (options.key !== false) await h.root.credentials.set('OPENAI_API_KEY', KEY)
  return h
}

/** How long a test waits for the stream to reach a point (polling every 10 ms). */
const WAIT = { timeout: 30_000, interval: 10 }
const body = (index: number) => llm.requests[index]!.body
const data = <K extends EventKind>(type: K) => h!.events(type).map((event) => event.data)

/** One request straight through `ctx.llm` (no agent turn), expecting a clean finish. */
async function ask(request: Pick<LlmRequest, 'tools' | 'toolChoice'>): Promise<void> {
  llm.enqueue({ text: 'ok' })
  const chunks = await streamOnce(h!.root, { route: { provider: 'openai', model: 'gpt-test' }, ...request })
  expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
}
const echoTool = ECHO_TOOL

describe('an OpenAI-compatible turn through the real composition', () => {
  test("a request's toolChoice is sent as tool_choice beside the tools, and nothing when unset or without tools", async () => {
    await boot()
    await ask({ tools: [echoTool], toolChoice: 'none' })
    await ask({ tools: [echoTool], toolChoice: 'auto' })
    await ask({ tools: [echoTool] })
    await ask({ tools: [], toolChoice: 'none' })
    expect(body(0).tool_choice).toEqual('none')
    expect(body(1).tool_choice).toEqual('auto')
    expect(body(2)).not.toHaveProperty('tool_choice')
    expect(body(3)).not.toHaveProperty('tool_choice')
  })

  test('a text answer streams into the log, with no SDK platform headers and only the fields the API needs', async () => {
    await boot()
    llm.enqueue({ text: 'Hello from the server' })
    const result = await h!.run('say hello')
    expect(result).toMatchObject({ reason: 'completed', text: 'Hello from the server' })
    expect(data('assistant/chunk').length).toBeGreaterThan(1)
    const request = llm.requests[0]!
    expect(request.path).toBe('/v1/chat/completions')
    expect(Object.keys(request.body).sort()).toEqual(['messages', 'model', 'stream', 'stream_options', 'tools'])
    expect(request.body.messages).toEqual([
      { role: 'system', content: data('request/header')[0]!.system },
      { role: 'user', content: 'say hello' },
    ])
    expect(request.headers['authorization']).toBe(`Bearer ${KEY}`)
    expect(request.headers['user-agent']).toBe(`dsh/${h!.root.app.version}`)
    expect(Object.keys(request.headers).filter((name) => name.startsWith('x-') || name.startsWith('openai-'))).toEqual(
      [],
    )
  })

  test('reasoning is logged but not sent back; a tool call in pieces runs and its result goes back', async () => {
    await boot()
    llm.enqueue(
      { reasoning: 'Echo seems right.', toolCalls: [{ name: 'echo', arguments: { text: 'ping' }, pieces: 4 }] },
      { text: 'It said ping.' },
    )
    expect((await h!.run('echo ping')).reason).toBe('completed')
    expect(data('assistant/message')[0]!.content).toEqual([
      { type: 'reasoning', text: 'Echo seems right.', provider: 'openai' },
      { type: 'tool-call', callId: 'call_mock_0_0', name: 'echo', arguments: { text: 'ping' } },
    ])
    expect(body(1).messages.slice(1)).toEqual([
      { role: 'user', content: 'echo ping' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_mock_0_0', type: 'function', function: { name: 'echo', arguments: '{"text":"ping"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_mock_0_0', content: 'ping' },
    ])
  })

  test('usage from the separate usage chunk is logged disjoint, cached tokens as cache reads', async () => {
    await boot()
    llm.enqueue({ text: 'ok', usage: { input: 40, output: 9, cacheRead: 60 } })
    await h!.run('count')
    // OpenAI reports `reasoning_tokens` (0 for a model that did not reason), so the count is logged, not left out.
    expect(data('assistant/message')[0]!.usage).toEqual({
      input: 40,
      output: 9,
      cacheRead: 60,
      cacheWrite: 0,
      reasoning: 0,
    })
  })

  test('the route effort is sent as reasoning_effort (off as none) for a model that lists efforts', async () => {
    const models = `[{ id: gpt-think, contextWindow: 200000, reasoning: true, efforts: [off, low, high] }]`
    await boot({
      openai: `{ baseUrl: '${llm.url}/v1', models: ${models} }`,
      route: '{ provider: openai, model: gpt-think, effort: high }',
    })
    llm.enqueue({ text: 'a' }, { text: 'b' })
    await h!.run('one')
    expect(body(0).reasoning_effort).toBe('high')
    ;(await h!.agent()).setRoute({ provider: 'openai', model: 'gpt-think', effort: 'off' })
    await h!.run('two')
    expect(body(1).reasoning_effort).toBe('none')
  })
})

describe('failures end the turn with a typed error', () => {
  test.each([
    [401, 'AUTH'],
    [403, 'AUTH'],
    [402, 'QUOTA'],
    [429, 'RATE_LIMIT'],
    [400, 'INVALID_REQUEST'],
    [404, 'INVALID_REQUEST'],
    [500, 'SERVER'],
    [503, 'SERVER'],
  ])('HTTP %i is %s', async (status, code) => {
    await boot()
    llm.enqueue({ error: { status } })
    const result = await h!.run('go')
    expect(result.error?.code).toBe(code)
    expect(data('assistant/message')[0]!.error).toMatchObject({ code, status })
    expect(llm.requests).toHaveLength(1)
  })

  test('a prompt over the window is CONTEXT_WINDOW_EXCEEDED and llm-retry does not retry it', async () => {
    await boot({ retry: '{ maxRetries: 3, baseDelayMs: 1 }' })
    llm.enqueue({ contextOverflow: true })
    const result = await h!.run('too much')
    expect(result.error?.code).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(data('assistant/message')[0]!.error).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    // Retrying the same request cannot help (context management may shrink it instead): llm-retry stays out.
    expect(data('llm/retry' as EventKind)).toEqual([])
  })

  test('a socket cut mid-stream is TRANSPORT', async () => {
    await boot()
    llm.enqueue({ text: 'partial answer', cutAfterChunks: 3 })
    expect((await h!.run('go')).error?.code).toBe('TRANSPORT')
  })

  test('a stream that goes silent is TIMEOUT after idleTimeoutMs', async () => {
    await boot({ openai: `{ baseUrl: '${llm.url}/v1', idleTimeoutMs: 300 }` })
    llm.enqueue({ text: 'thinking about it', stallAfterChunks: 2 })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('TIMEOUT')
  })

  test('a 429 with Retry-After is retried after the wait the server asked for', async () => {
    await boot({ retry: '{ maxRetries: 2, baseDelayMs: 5000 }' })
    llm.enqueue({ error: { status: 429, retryAfter: 1 } }, { text: 'second time lucky' })
    const result = await h!.run('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'second time lucky' })
    expect(data('llm/retry' as EventKind)).toEqual([
      { attempt: 1, maxRetries: 2, code: 'RATE_LIMIT', delayMs: 1000, reason: expect.any(String) },
    ])
    expect(llm.requests[1]!.timing.receivedAt - llm.requests[0]!.timing.receivedAt).toBeGreaterThanOrEqual(950)
  })

  test('cancelling mid-stream aborts the request and ends the turn aborted with the text that arrived', async () => {
    await boot()
    llm.enqueue({ text: 'a long answer that never ends', stallAfterChunks: 3 })
    const agent = await h!.agent()
    agent.followup('go')
    await vi.waitUntil(() => h!.events('assistant/chunk').length >= 2, WAIT)
    agent.cancel()
    expect((await agent.whenIdle())?.reason).toBe('aborted')
    expect(data('assistant/message')[0]).toMatchObject({ finish: 'aborted', interrupted: true })
    await vi.waitUntil(() => llm.requests[0]!.timing.endedAt !== undefined, WAIT)
  })
})

describe('keys and local servers', () => {
  test('the key never appears in the log, the JSONL file or the error, even when the server echoes it', async () => {
    await boot()
    llm.enqueue({ error: { status: 401, message: `Incorrect API key provided: ${KEY}.` } })
    const result = await h!.run('go')
    expect(result.error?.message).toContain('«redacted:OPENAI_API_KEY»')
    expect(JSON.stringify(result)).not.toContain(KEY)
    expect(JSON.stringify(h!.events())).not.toContain(KEY)
    const dir = join(h!.home, 'sessions')
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('session.jsonl'),
    )
    expect(files).toHaveLength(1)
    expect(statSync(join(dir, files[0]!)).size).toBeGreaterThan(0)
    expect(readFileSync(join(dir, files[0]!), 'utf8')).not.toContain(KEY)
  })

  test('a missing key ends the turn with CREDENTIAL_MISSING naming the variable, and nothing is sent', async () => {
    await boot({ key: false })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('CREDENTIAL_MISSING')
    expect(result.error?.message).toContain('OPENAI_API_KEY')
    expect(llm.requests).toHaveLength(0)
  })

  test('with requireKey false a keyless local server is asked without any authorization header', async () => {
    await boot({ key: false, openai: `{ baseUrl: '${llm.url}/v1', requireKey: false }` })
    llm.enqueue({ text: 'local answer' })
    expect((await h!.run('go')).reason).toBe('completed')
    expect(llm.requests[0]!.headers).not.toHaveProperty('authorization')
  })

  test('models() lists what the server reports at /models, once per cache period', async () => {
    const local = await startMockServer({ models: ['llama3.2', 'qwen3:8b'] })
    try {
      await boot({
        key: false,
        openai: `{ baseUrl: '${local.url}/v1', requireKey: false, models: [{ id: qwen3:8b, contextWindow: 40960 }] }`,
      })
      const adapter = h!.root.llm.adapter('openai')
      const listed = await adapter.models()
      expect(listed.map((model) => [model.id, model.contextWindow])).toEqual([
        ['qwen3:8b', 40_960],
        ['llama3.2', 128_000],
      ])
      await adapter.models()
      expect(local.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models'])
    } finally {
      await local.close()
    }
  })
})
