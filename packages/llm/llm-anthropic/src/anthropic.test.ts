import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { bootComposition, ECHO_TOOL, type Harness, streamOnce, WITHOUT_RUNTIME_CONTEXT } from '@dsh/test-harness'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import type { EventKind } from '@dsh/session'
import type { LlmRequest } from '@dsh/llm'
import type {} from '@dsh/agent'

const KEY = 'sk-ant-dsh-test-91c4e2b8'

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
  anthropic?: string
  retry?: string
  route?: string
  key?: boolean
}

async function boot(options: BootOptions = {}): Promise<Harness> {
  // These tests compare the wire requests exactly: no runtime context.
  const patch = `
- insert:
    - id: fixture-tools
      name: '@dsh/test-harness/fixture-tools'
${WITHOUT_RUNTIME_CONTEXT}- id: agents
  config: { route: ${options.route ?? '{ provider: anthropic, model: claude-sonnet-4-6 }'} }
- id: llm-anthropic
  config: ${options.anthropic ?? `{ baseUrl: '${llm.url}' }`}
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-retry
  config: ${options.retry ?? '{ maxRetries: 0 }'}
`
  h = await bootComposition({ patch })
  if (options.key !== false) {
    await h.root.credentials.set('ANTHROPIC_API_KEY', KEY)
    await h.root.credentials.set('DEEPSEEK_API_KEY', `${KEY}-deepseek`)
  }
  return h
}

/** How long a test waits for the stream to reach a point (polling every 10 ms). */
const WAIT = { timeout: 30_000, interval: 10 }
const body = (index: number) => llm.requests[index]!.body
const data = <K extends EventKind>(type: K) => h!.events(type).map((event) => event.data)

/** One request straight through `ctx.llm` (no agent turn), expecting a clean finish. */
async function ask(request: Pick<LlmRequest, 'tools' | 'toolChoice'>): Promise<void> {
  llm.enqueue({ text: 'ok' })
  const chunks = await streamOnce(h!.root, { route: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, ...request })
  expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
}
const echoTool = ECHO_TOOL

describe('an Anthropic turn through the real composition', () => {
  test("a request's toolChoice is sent as tool_choice beside the tools, and nothing when unset or without tools", async () => {
    await boot()
    await ask({ tools: [echoTool], toolChoice: 'none' })
    await ask({ tools: [echoTool], toolChoice: 'auto' })
    await ask({ tools: [echoTool] })
    await ask({ tools: [], toolChoice: 'none' })
    expect(body(0).tool_choice).toEqual({ type: 'none' })
    expect(body(1).tool_choice).toEqual({ type: 'auto' })
    expect(body(2)).not.toHaveProperty('tool_choice')
    expect(body(3)).not.toHaveProperty('tool_choice')
  })

  test('a text answer streams into the log, with no SDK platform headers and only the fields the API needs', async () => {
    await boot()
    llm.enqueue({ text: 'Hello from Claude' })
    const result = await h!.run('say hello')
    expect(result).toMatchObject({ reason: 'completed', text: 'Hello from Claude' })
    const request = llm.requests[0]!
    expect(request.path).toBe('/v1/messages')
    expect(Object.keys(request.body).sort()).toEqual([
      'cache_control',
      'max_tokens',
      'messages',
      'model',
      'stream',
      'system',
      'tools',
    ])
    expect(request.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      stream: true,
      system: data('request/header')[0]!.system,
      cache_control: { type: 'ephemeral' },
    })
    expect(request.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'say hello' }] }])
    expect(request.body.tools.find((tool: any) => tool.name === 'echo')).toEqual({
      name: 'echo',
      description: 'Returns its text.',
      input_schema: expect.objectContaining({ type: 'object' }),
    })
    // SDK 1.x sends the key as a bearer token.
    expect(request.headers['authorization']).toBe(`Bearer ${KEY}`)
    expect(request.headers['user-agent']).toBe(`dsh/${h!.root.app.version}`)
    expect(Object.keys(request.headers).filter((name) => name.startsWith('x-'))).toEqual([])
  })

  test('a signed thinking block and a tool call in pieces are logged and sent back, signature included', async () => {
    await boot()
    llm.enqueue(
      { reasoning: 'Let me echo.', toolCalls: [{ name: 'echo', arguments: { text: 'pong' }, pieces: 4 }] },
      { text: 'It said pong.' },
    )
    expect((await h!.run('echo pong')).reason).toBe('completed')
    const signature = Buffer.from('llm-mock-server signature #0').toString('base64')
    expect(data('assistant/message')[0]!.content).toEqual([
      { type: 'reasoning', text: 'Let me echo.', provider: 'anthropic', signature },
      { type: 'tool-call', callId: 'toolu_mock_0_0', name: 'echo', arguments: { text: 'pong' } },
    ])
    expect(body(1).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'echo pong' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Let me echo.', signature },
          { type: 'tool_use', id: 'toolu_mock_0_0', name: 'echo', input: { text: 'pong' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_mock_0_0', content: [{ type: 'text', text: 'pong' }] }],
      },
    ])
  })

  test('reasoning another provider produced is not sent to Anthropic', async () => {
    await boot({ route: '{ provider: deepseek, model: deepseek-v4-flash }' })
    llm.enqueue({ reasoning: 'DeepSeek thoughts.', text: 'First answer.' }, { text: 'Second answer.' })
    await h!.run('first')
    expect(data('assistant/message')[0]!.content[0]).toMatchObject({ type: 'reasoning', provider: 'deepseek' })
    ;(await h!.agent()).setRoute({ provider: 'anthropic', model: 'claude-sonnet-4-6' })
    await h!.run('second')
    expect(llm.requests[1]!.path).toBe('/v1/messages')
    expect(body(1).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer.' }] },
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
    ])
  })

  test('usage is logged disjoint with cache reads and cache writes', async () => {
    await boot()
    llm.enqueue({ text: 'ok', usage: { input: 25, output: 7, cacheRead: 300, cacheWrite: 40 } })
    await h!.run('count')
    expect(data('assistant/message')[0]!.usage).toEqual({ input: 25, output: 7, cacheRead: 300, cacheWrite: 40 })
  })

  test('the route effort becomes adaptive thinking at that effort; off disables thinking', async () => {
    await boot({ route: '{ provider: anthropic, model: claude-opus-4-6, effort: max }' })
    llm.enqueue({ text: 'a' }, { text: 'b' })
    await h!.run('one')
    expect(body(0)).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } })
    ;(await h!.agent()).setRoute({ provider: 'anthropic', model: 'claude-opus-4-6', effort: 'off' })
    await h!.run('two')
    expect(body(1).thinking).toEqual({ type: 'disabled' })
    expect(body(1)).not.toHaveProperty('output_config')
  })
})

describe('failures end the turn with a typed error', () => {
  test.each([
    [401, 'AUTH'],
    [403, 'AUTH'],
    [402, 'QUOTA'],
    [429, 'RATE_LIMIT'],
    [400, 'INVALID_REQUEST'],
    [500, 'SERVER'],
    [529, 'SERVER'],
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
    expect(result.error?.message).toMatch(/prompt is too long/)
    expect(data('assistant/message')[0]!.error).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    // Retrying the same request cannot help (context management may shrink it instead): llm-retry stays out.
    expect(data('llm/retry' as EventKind)).toEqual([])
  })

  test('a socket cut mid-stream is TRANSPORT', async () => {
    await boot()
    llm.enqueue({ text: 'partial answer', cutAfterChunks: 4 })
    expect((await h!.run('go')).error?.code).toBe('TRANSPORT')
  })

  test('a stream that goes silent is TIMEOUT after idleTimeoutMs', async () => {
    await boot({ anthropic: `{ baseUrl: '${llm.url}', idleTimeoutMs: 300 }` })
    llm.enqueue({ text: 'thinking about it', stallAfterChunks: 3 })
    expect((await h!.run('go')).error?.code).toBe('TIMEOUT')
  })

  test('an overloaded 529 with Retry-After is retried after the wait the server asked for', async () => {
    await boot({ retry: '{ maxRetries: 2, baseDelayMs: 5000 }' })
    llm.enqueue({ error: { status: 529, retryAfter: 1 } }, { text: 'second time lucky' })
    const result = await h!.run('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'second time lucky' })
    expect(data('llm/retry' as EventKind)).toEqual([
      { attempt: 1, maxRetries: 2, code: 'SERVER', delayMs: 1000, reason: expect.any(String) },
    ])
    expect(llm.requests[1]!.timing.receivedAt - llm.requests[0]!.timing.receivedAt).toBeGreaterThanOrEqual(950)
  })

  test('cancelling mid-stream aborts the request and ends the turn aborted with the text that arrived', async () => {
    await boot()
    llm.enqueue({ text: 'a long answer that never ends', stallAfterChunks: 6 })
    const agent = await h!.agent()
    agent.followup('go')
    await vi.waitUntil(() => h!.events('assistant/chunk').length >= 2, WAIT)
    agent.cancel()
    expect((await agent.whenIdle())?.reason).toBe('aborted')
    expect(data('assistant/message')[0]).toMatchObject({ finish: 'aborted', interrupted: true })
    await vi.waitUntil(() => llm.requests[0]!.timing.endedAt !== undefined, WAIT)
  })
})

describe('the key', () => {
  test('never appears in the log, the JSONL file or the error, even when the server echoes it', async () => {
    await boot()
    llm.enqueue({ error: { status: 401, message: `invalid x-api-key ${KEY}` } })
    const result = await h!.run('go')
    expect(result.error?.message).toContain('«redacted:ANTHROPIC_API_KEY»')
    expect(JSON.stringify(result)).not.toContain(KEY)
    expect(JSON.stringify(h!.events())).not.toContain(KEY)
    const dir = join(h!.home, 'sessions')
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('session.jsonl'),
    )
    expect(files).toHaveLength(1)
    expect(readFileSync(join(dir, files[0]!), 'utf8')).not.toContain(KEY)
  })

  test('a missing key ends the turn with CREDENTIAL_MISSING naming the variable, and nothing is sent', async () => {
    await boot({ key: false })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('CREDENTIAL_MISSING')
    expect(result.error?.message).toContain('ANTHROPIC_API_KEY')
    expect(llm.requests).toHaveLength(0)
  })
})
