import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { bootComposition, ECHO_TOOL, type Harness, streamOnce, WITHOUT_RUNTIME_CONTEXT } from '@dsh/test-harness'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import type { EventKind } from '@dsh/session'
import type { LlmRequest } from '@dsh/llm'
import type {} from '@dsh/agent'
import { DeepSeekAdapter, DEFAULT_BASE_URL } from './index.ts'

// Long enough to be redacted (credentials-local skips values under 8 characters).
const KEY = 'sk-dsh-deepseek-test-7f3a9c21'

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
  deepseek?: string
  retry?: string
  route?: string
  /** Files in the temp home; without them the key is stored through ctx.credentials after boot. */
  homeFiles?: Record<string, string>
  workspaceFiles?: Record<string, string>
}

async function boot(options: BootOptions = {}): Promise<Harness> {
  // These tests compare the wire requests exactly: no runtime context.
  const patch = `
- insert:
    - id: fixture-tools
      name: '@dsh/test-harness/fixture-tools'
${WITHOUT_RUNTIME_CONTEXT}- id: agents
  config: { route: ${options.route ?? '{ provider: deepseek, model: deepseek-v4-flash }'} }
- id: llm-deepseek
  config: ${options.deepseek ?? `{ baseUrl: '${llm.url}' }`}
- id: llm-retry
  config: ${options.retry ?? '{ maxRetries: 0 }'}
`
  h = await bootComposition({ patch, homeFiles: options.homeFiles, workspaceFiles: options.workspaceFiles })
  if (!options.homeFiles) await h.root.credentials.set('DEEPSEEK_API_KEY', KEY)
  return h
}

/** How long a test waits for the stream to reach a point (polling every 10 ms). */
const WAIT = { timeout: 30_000, interval: 10 }
const body = (index: number) => llm.requests[index]!.body
const data = <K extends EventKind>(type: K) => h!.events(type).map((event) => event.data)

function sessionFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sessionFiles(path) : name === 'session.jsonl' ? [path] : []
  })
}

/** One request straight through `ctx.llm` (no agent turn), expecting a clean finish. */
async function ask(request: Pick<LlmRequest, 'tools' | 'toolChoice'>): Promise<void> {
  llm.enqueue({ text: 'ok' })
  const chunks = await streamOnce(h!.root, { route: { provider: 'deepseek', model: 'deepseek-v4-flash' }, ...request })
  expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
}
const echoTool = ECHO_TOOL

describe('a DeepSeek turn through the real composition', () => {
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

  test('a text answer streams into the log and the request carries only what the API needs', async () => {
    await boot()
    llm.enqueue({ text: 'Hello from DeepSeek' })
    const result = await h!.run('say hello')
    expect(result).toMatchObject({ reason: 'completed', text: 'Hello from DeepSeek' })
    expect(
      data('assistant/chunk')
        .map((chunk) => chunk.text)
        .join(''),
    ).toBe('Hello from DeepSeek')
    expect(data('assistant/chunk').length).toBeGreaterThan(1)
    const request = llm.requests[0]!
    expect(request.path).toBe('/chat/completions')
    expect(Object.keys(request.body).sort()).toEqual([
      'max_tokens',
      'messages',
      'model',
      'stream',
      'stream_options',
      'tools',
    ])
    expect(request.body).toMatchObject({
      model: 'deepseek-v4-flash',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 384_000,
    })
    expect(request.body.messages).toEqual([
      { role: 'system', content: data('request/header')[0]!.system },
      { role: 'user', content: 'say hello' },
    ])
    expect(request.headers['authorization']).toBe(`Bearer ${KEY}`)
    expect(request.headers['user-agent']).toBe(`dsh/${h!.root.app.version}`)
    const expected = [
      'accept',
      'accept-encoding',
      'accept-language',
      'authorization',
      'connection',
      'content-length',
      'content-type',
      'host',
      'sec-fetch-mode',
      'user-agent',
    ]
    expect(Object.keys(request.headers).filter((name) => !expected.includes(name))).toEqual([])
  })

  test('reasoning and a tool call in pieces are logged, and the next request sends both back as the log holds them', async () => {
    await boot()
    llm.enqueue(
      { reasoning: 'I should echo it.', toolCalls: [{ name: 'echo', arguments: { text: 'hello world' }, pieces: 5 }] },
      { text: 'It said hello world.' },
    )
    const result = await h!.run('echo hello world')
    expect(result.reason).toBe('completed')
    expect(
      data('assistant/chunk')
        .filter((chunk) => chunk.kind === 'reasoning')
        .map((chunk) => chunk.text)
        .join(''),
    ).toBe('I should echo it.')
    const first = data('assistant/message')[0]!
    expect(first.content).toEqual([
      { type: 'reasoning', text: 'I should echo it.', provider: 'deepseek' },
      { type: 'tool-call', callId: 'call_mock_0_0', name: 'echo', arguments: { text: 'hello world' } },
    ])
    expect(first.finish).toBe('tool-calls')
    expect(data('tool/result')[0]).toEqual({
      callId: 'call_mock_0_0',
      content: [{ type: 'text', text: 'hello world' }],
    })
    expect(body(1).messages.slice(1)).toEqual([
      { role: 'user', content: 'echo hello world' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'I should echo it.',
        tool_calls: [
          { id: 'call_mock_0_0', type: 'function', function: { name: 'echo', arguments: '{"text":"hello world"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_mock_0_0', content: 'hello world' },
    ])
    expect(body(1).tools.find((tool: any) => tool.function.name === 'echo')).toEqual({
      type: 'function',
      function: {
        name: 'echo',
        description: 'Returns its text.',
        parameters: expect.objectContaining({ required: ['text'] }),
      },
    })
  })

  test('usage is logged disjoint: cache hits are cache reads and input is the uncached rest', async () => {
    await boot()
    llm.enqueue({ text: 'ok', usage: { input: 30, output: 12, cacheRead: 70 } })
    await h!.run('count')
    expect(data('assistant/message')[0]!.usage).toEqual({ input: 30, output: 12, cacheRead: 70, cacheWrite: 0 })
  })

  test('the route effort becomes thinking and reasoning_effort; off disables thinking', async () => {
    await boot({ route: '{ provider: deepseek, model: deepseek-v4-pro, effort: max }' })
    llm.enqueue({ text: 'deep' }, { text: 'quick' })
    await h!.run('think hard')
    expect(body(0)).toMatchObject({ model: 'deepseek-v4-pro', thinking: { type: 'enabled' }, reasoning_effort: 'max' })
    ;(await h!.agent()).setRoute({ provider: 'deepseek', model: 'deepseek-v4-flash', effort: 'off' })
    await h!.run('now quickly')
    expect(body(1).thinking).toEqual({ type: 'disabled' })
    expect(body(1)).not.toHaveProperty('reasoning_effort')
    expect(data('request/context').map((context) => context.effort)).toEqual(['max', 'off'])
  })
})

describe('failures end the turn with a typed error', () => {
  test.each([
    [401, 'AUTH'],
    [403, 'AUTH'],
    [402, 'QUOTA'],
    [429, 'RATE_LIMIT'],
    [400, 'INVALID_REQUEST'],
    [422, 'INVALID_REQUEST'],
    [500, 'SERVER'],
    [503, 'SERVER'],
  ])('HTTP %i is %s', async (status, code) => {
    await boot()
    llm.enqueue({ error: { status } })
    const result = await h!.run('go')
    expect(result.reason).toBe('error')
    expect(result.error?.code).toBe(code)
    expect(result.error?.message).toContain(`HTTP ${status}`)
    expect(data('assistant/message')[0]!.error).toMatchObject({ code, status })
  })

  test('a prompt over the window is CONTEXT_WINDOW_EXCEEDED and llm-retry does not retry it', async () => {
    await boot({ retry: '{ maxRetries: 3, baseDelayMs: 1 }' })
    llm.enqueue({ contextOverflow: true })
    const result = await h!.run('too much')
    expect(result.error?.code).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(result.error?.message).toMatch(/maximum context length is 1000000 tokens/)
    expect(data('assistant/message')[0]!.error).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    // Retrying the same request cannot help (context management may shrink it instead): llm-retry stays out.
    expect(data('llm/retry' as EventKind)).toEqual([])
  })

  test('a socket cut mid-stream is TRANSPORT and keeps the text that arrived', async () => {
    await boot()
    llm.enqueue({ text: 'partial answer', cutAfterChunks: 3 })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('TRANSPORT')
    const message = data('assistant/message')[0]!
    expect(message.finish).toBe('error')
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^partial/) })
  })

  test('a server nobody listens on is TRANSPORT naming the address', async () => {
    const closed = await startMockServer()
    await closed.close()
    await boot({ deepseek: `{ baseUrl: '${closed.url}' }` })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('TRANSPORT')
    expect(result.error?.message).toContain(closed.url)
    expect(result.error?.message).toMatch(/ECONNREFUSED/)
  })

  test('a stream that goes silent is TIMEOUT after idleTimeoutMs', async () => {
    await boot({ deepseek: `{ baseUrl: '${llm.url}', idleTimeoutMs: 300 }` })
    llm.enqueue({ text: 'thinking about it', stallAfterChunks: 2 })
    const started = Date.now()
    const result = await h!.run('go')
    expect(result.error?.code).toBe('TIMEOUT')
    expect(result.error?.message).toContain('300 ms')
    expect(Date.now() - started).toBeLessThan(30_000) // the stalled stream would never end
  })

  test('a 429 with Retry-After is retried after the wait the server asked for', async () => {
    await boot({ retry: '{ maxRetries: 2, baseDelayMs: 5000 }' })
    llm.enqueue({ error: { status: 429, retryAfter: 1 } }, { text: 'second time lucky' })
    const result = await h!.run('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'second time lucky' })
    expect(data('llm/retry' as EventKind)).toEqual([
      { attempt: 1, maxRetries: 2, code: 'RATE_LIMIT', delayMs: 1000, reason: expect.stringContaining('1000 ms') },
    ])
    const waited = llm.requests[1]!.timing.receivedAt - llm.requests[0]!.timing.receivedAt
    expect(waited).toBeGreaterThanOrEqual(950)
    expect(data('assistant/message')[0]!.error).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 1000 })
  })

  test('cancelling mid-stream aborts the request, keeps the text that arrived and ends the turn aborted', async () => {
    await boot()
    llm.enqueue({ text: 'a long answer that never ends', stallAfterChunks: 3 })
    const agent = await h!.agent()
    agent.followup('go')
    await vi.waitUntil(() => h!.events('assistant/chunk').length >= 2, WAIT)
    agent.cancel()
    const result = await agent.whenIdle()
    expect(result?.reason).toBe('aborted')
    const message = data('assistant/message')[0]!
    expect(message).toMatchObject({ finish: 'aborted', interrupted: true })
    expect((message.content[0] as { text: string }).text).toMatch(/^a lon/)
    await vi.waitUntil(() => llm.requests[0]!.timing.endedAt !== undefined, WAIT)
  })
})

describe('the key', () => {
  test('never appears in the session log, the JSONL file or the error, even when the server echoes it', async () => {
    await boot()
    llm.enqueue({ error: { status: 401, message: `Authentication Fails, Your api key: ${KEY} is invalid` } })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('AUTH')
    expect(llm.requests[0]!.headers['authorization']).toBe(`Bearer ${KEY}`)
    expect(result.error?.message).toContain('«redacted:DEEPSEEK_API_KEY»')
    expect(JSON.stringify(result)).not.toContain(KEY)
    expect(JSON.stringify(h!.events())).not.toContain(KEY)
    const files = sessionFiles(join(h!.home, 'sessions'))
    expect(files).toHaveLength(1)
    const jsonl = readFileSync(files[0]!, 'utf8')
    expect(jsonl).toContain('«redacted:DEEPSEEK_API_KEY»')
    expect(jsonl).not.toContain(KEY)
  })

  test('a missing key ends the turn with CREDENTIAL_MISSING naming the variable, and nothing is sent', async () => {
    await boot({ homeFiles: {} })
    const result = await h!.run('go')
    expect(result.reason).toBe('error')
    expect(result.error?.code).toBe('CREDENTIAL_MISSING')
    expect(result.error?.message).toContain('DEEPSEEK_API_KEY')
    expect(result.error?.message).toContain('.credentials.yaml')
    expect(llm.requests).toHaveLength(0)
    const ready = await h!.root.llm.adapter('deepseek').ready!({ provider: 'deepseek', model: 'deepseek-v4-flash' })
    expect(ready).toMatchObject({ ok: false, error: { code: 'CREDENTIAL_MISSING' } })
  })

  test('a key is resolved per request: one added after boot is used by the next turn', async () => {
    await boot({ homeFiles: {} })
    expect((await h!.run('first')).error?.code).toBe('CREDENTIAL_MISSING')
    await h!.root.credentials.set('DEEPSEEK_API_KEY', KEY)
    llm.enqueue({ text: 'now it works' })
    expect((await h!.run('second')).reason).toBe('completed')
    expect(llm.requests[0]!.headers['authorization']).toBe(`Bearer ${KEY}`)
  })

  test('the base URL is never taken from the workspace .env or the credentials file', async () => {
    const elsewhere = `DEEPSEEK_BASE_URL=${llm.url}/stolen\n`
    await boot({
      deepseek: '{}',
      workspaceFiles: { '.env': elsewhere },
      homeFiles: { '.credentials.yaml': `DEEPSEEK_API_KEY: ${KEY}\nDEEPSEEK_BASE_URL: ${llm.url}/stolen\n` },
    })
    const adapter = h!.root.llm.adapter('deepseek') as DeepSeekAdapter
    expect(adapter.baseUrl).toBe((process.env.DEEPSEEK_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, ''))
    expect(adapter.baseUrl).not.toContain('/stolen')
  })
})

describe('the catalog', () => {
  test('lists both V4 models with 1M windows and describes an unknown model with the configured defaults', async () => {
    await boot()
    const adapter = h!.root.llm.adapter('deepseek')
    expect((await adapter.models()).map((model) => [model.id, model.contextWindow])).toEqual([
      ['deepseek-v4-flash', 1_000_000],
      ['deepseek-v4-pro', 1_000_000],
    ])
    expect(h!.root.llm.describe({ provider: 'deepseek', model: 'deepseek-v9-preview' })).toEqual({
      id: 'deepseek-v9-preview',
      contextWindow: 128_000,
      images: false,
      reasoning: true,
      efforts: ['off', 'low', 'high', 'max'],
    })
  })
})
