import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { startMockServer, type MockServer } from './index.ts'
import { json, payloads, post, readSse } from './test-support/sse.ts'

let server: MockServer
beforeEach(async () => {
  server = await startMockServer()
})
afterEach(() => server.close())

const deepseek = () => `${server.url}/chat/completions`
const openai = () => `${server.url}/v1/chat/completions`
const ask = { model: 'deepseek-v4-flash', messages: [{ role: 'user', content: 'hi' }], stream: true }

/** The envelope every chunk of a reply shares. */
const envelope = (index: number, model = 'deepseek-v4-flash') => ({
  id: `chatcmpl-mock-${index}`,
  object: 'chat.completion.chunk',
  created: expect.any(Number),
  model,
  system_fingerprint: 'fp_llm_mock_server',
})
const choice = (delta: unknown, finish: string | null = null) => [
  { index: 0, delta, logprobs: null, finish_reason: finish },
]

async function stream(url: string, body: unknown) {
  const response = await post(url, body)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  const { events, error } = await readSse(response)
  expect(error).toBeUndefined()
  return payloads(events)
}

describe('DeepSeek streams (POST /chat/completions)', () => {
  test('a text string arrives as several content deltas, then a finish chunk carrying the usage, then [DONE]', async () => {
    server.enqueue({ text: 'Hello, world', usage: { input: 12, output: 3 } })
    expect(await stream(deepseek(), ask)).toEqual([
      { ...envelope(0), choices: choice({ role: 'assistant', content: '' }) },
      { ...envelope(0), choices: choice({ content: 'Hell' }) },
      { ...envelope(0), choices: choice({ content: 'o, w' }) },
      { ...envelope(0), choices: choice({ content: 'orld' }) },
      {
        ...envelope(0),
        choices: choice({ content: '' }, 'stop'),
        usage: {
          prompt_tokens: 12,
          completion_tokens: 3,
          total_tokens: 15,
          prompt_tokens_details: { cached_tokens: 0 },
          prompt_cache_hit_tokens: 0,
          prompt_cache_miss_tokens: 12,
        },
      },
      '[DONE]',
    ])
  })

  test('with include_usage every chunk carries "usage": null except the finish chunk, which has the cache hit and miss counts', async () => {
    server.enqueue({ text: ['Hi'], usage: { input: 10, output: 1, cacheRead: 90 } })
    const chunks = await stream(deepseek(), { ...ask, stream_options: { include_usage: true } })
    expect(chunks.slice(0, 2).map((chunk) => chunk.usage)).toEqual([null, null])
    expect(chunks[2].choices).toEqual(choice({ content: '' }, 'stop'))
    expect(chunks[2].usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 1,
      total_tokens: 101,
      prompt_tokens_details: { cached_tokens: 90 },
      prompt_cache_hit_tokens: 90,
      prompt_cache_miss_tokens: 10,
    })
    expect(chunks).toHaveLength(4)
  })

  test('reasoning arrives as reasoning_content deltas before the content, and its tokens are reported', async () => {
    server.enqueue({ reasoning: ['Let me ', 'think.'], text: ['Yes.'], usage: { input: 5, output: 9, reasoning: 6 } })
    const chunks = await stream(deepseek(), ask)
    expect(chunks.slice(0, 4).map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: null, reasoning_content: '' },
      { content: null, reasoning_content: 'Let me ' },
      { content: null, reasoning_content: 'think.' },
      { content: 'Yes.', reasoning_content: null },
    ])
    expect(chunks[4].usage.completion_tokens_details).toEqual({ reasoning_tokens: 6 })
  })

  test('tool calls arrive as indexed deltas: id and name first, then argument pieces that rejoin to valid JSON', async () => {
    server.enqueue({
      toolCalls: [
        { name: 'read_file', arguments: { path: 'src/a.ts', limit: 20 }, pieces: 4 },
        { id: 'call_given', name: 'bash', arguments: '{"command":"ls -la"}' },
      ],
    })
    const chunks = await stream(deepseek(), ask)
    const calls = chunks.slice(1, -2).map((chunk) => chunk.choices[0].delta.tool_calls)
    expect(calls.every((list) => list.length === 1)).toBe(true)
    const deltas = calls.map((list) => list[0])
    expect(deltas.filter((delta) => delta.index === 0)).toHaveLength(5)
    expect(deltas.filter((delta) => delta.index === 1)).toHaveLength(4)
    expect(deltas[0]).toEqual({
      index: 0,
      id: 'call_mock_0_0',
      type: 'function',
      function: { name: 'read_file', arguments: '' },
    })
    expect(deltas[5]).toEqual({
      index: 1,
      id: 'call_given',
      type: 'function',
      function: { name: 'bash', arguments: '' },
    })
    for (const later of [...deltas.slice(1, 5), ...deltas.slice(6)])
      expect(Object.keys(later).sort()).toEqual(['function', 'index'])
    const joined = (index: number) =>
      deltas
        .filter((delta) => delta.index === index)
        .map((delta) => delta.function.arguments)
        .join('')
    expect(JSON.parse(joined(0))).toEqual({ path: 'src/a.ts', limit: 20 })
    expect(JSON.parse(joined(1))).toEqual({ command: 'ls -la' })
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls')
  })

  test('a reply cut short by the token limit finishes with "length"', async () => {
    server.enqueue({ text: 'Trunc', finish: 'length' })
    expect((await stream(deepseek(), ask)).at(-2).choices[0].finish_reason).toBe('length')
  })

  test('an empty reply is the role delta, the finish chunk and [DONE]', async () => {
    server.enqueue({ empty: true, usage: { input: 3, output: 0 } })
    const chunks = await stream(deepseek(), ask)
    expect(chunks.map((chunk) => (chunk === '[DONE]' ? chunk : chunk.choices[0]))).toEqual([
      choice({ role: 'assistant', content: '' })[0],
      choice({ content: '' }, 'stop')[0],
      '[DONE]',
    ])
  })

  test('stream: false gets the chat.completion body with reasoning, content, tool calls and usage', async () => {
    server.enqueue({
      reasoning: 'Hmm.',
      text: 'Reading it.',
      toolCalls: [{ name: 'read_file', arguments: { path: 'x' } }],
      usage: { input: 7, output: 11, cacheRead: 3 },
    })
    const response = await post(deepseek(), { ...ask, stream: false })
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(await json(response)).toEqual({
      id: 'chatcmpl-mock-0',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'deepseek-v4-flash',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Reading it.',
            reasoning_content: 'Hmm.',
            tool_calls: [
              { id: 'call_mock_0_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"x"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 11,
        total_tokens: 21,
        prompt_tokens_details: { cached_tokens: 3 },
        prompt_cache_hit_tokens: 3,
        prompt_cache_miss_tokens: 7,
      },
      system_fingerprint: 'fp_llm_mock_server',
    })
  })
})

describe('OpenAI streams (POST /v1/chat/completions)', () => {
  test('with include_usage the usage comes in its own chunk with "choices": [] before [DONE]', async () => {
    server.enqueue({ text: ['Hi', ' there'], usage: { input: 10, output: 2, cacheRead: 30 } })
    const model = 'gpt-5-mini'
    expect(await stream(openai(), { ...ask, model, stream_options: { include_usage: true } })).toEqual([
      { ...envelope(0, model), choices: choice({ role: 'assistant', content: '', refusal: null }), usage: null },
      { ...envelope(0, model), choices: choice({ content: 'Hi' }), usage: null },
      { ...envelope(0, model), choices: choice({ content: ' there' }), usage: null },
      { ...envelope(0, model), choices: choice({}, 'stop'), usage: null },
      {
        ...envelope(0, model),
        choices: [],
        usage: {
          prompt_tokens: 40,
          completion_tokens: 2,
          total_tokens: 42,
          prompt_tokens_details: { cached_tokens: 30, audio_tokens: 0 },
          completion_tokens_details: {
            reasoning_tokens: 0,
            audio_tokens: 0,
            accepted_prediction_tokens: 0,
            rejected_prediction_tokens: 0,
          },
        },
      },
      '[DONE]',
    ])
  })

  test('without include_usage no chunk mentions usage', async () => {
    server.enqueue({ text: 'Hi there' })
    const chunks = await stream(openai(), ask)
    expect(chunks.filter((chunk) => chunk !== '[DONE]' && 'usage' in chunk)).toEqual([])
    expect(chunks.at(-2).choices).toEqual(choice({}, 'stop'))
  })

  test('stream: false without text has content null, as OpenAI sends it for tool calls', async () => {
    server.enqueue({ toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] })
    const body = await json(await post(openai(), { ...ask, stream: false }))
    expect(body.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        { id: 'call_mock_0_0', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
      ],
    })
  })
})

describe('errors in the OpenAI-compatible shape', () => {
  test("401 is DeepSeek's authentication failure body", async () => {
    server.enqueue({ error: { status: 401 } })
    const response = await post(deepseek(), ask)
    expect(response.status).toBe(401)
    expect(await json(response)).toEqual({
      error: {
        message: 'Authentication Fails, Your api key: ****mock is invalid',
        type: 'authentication_error',
        param: null,
        code: 'invalid_request_error',
      },
    })
  })

  test("402 is DeepSeek's insufficient balance", async () => {
    server.enqueue({ error: { status: 402 } })
    const response = await post(deepseek(), ask)
    expect(response.status).toBe(402)
    expect((await json(response)).error.message).toBe('Insufficient Balance')
  })

  test('429 with retryAfter sends a retry-after header and the rate-limit body', async () => {
    server.enqueue({ error: { status: 429, retryAfter: 7 } })
    const response = await post(openai(), ask)
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('7')
    expect(await json(response)).toEqual({
      error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    })
  })

  test('500 is a server_error, and a scripted message, type and code replace the defaults', async () => {
    server.enqueue(
      { error: { status: 500 } },
      { error: { status: 503, message: 'busy', type: 'overloaded', code: 'x1' } },
    )
    const first = await post(openai(), ask)
    expect(first.status).toBe(500)
    expect((await json(first)).error.type).toBe('server_error')
    const second = await post(openai(), ask)
    expect(second.status).toBe(503)
    expect(second.headers.get('retry-after')).toBeNull()
    expect(await json(second)).toEqual({ error: { message: 'busy', type: 'overloaded', param: null, code: 'x1' } })
  })

  test("a context overflow is DeepSeek's 400 naming the maximum context length", async () => {
    server.enqueue({ contextOverflow: true })
    const response = await post(deepseek(), ask)
    expect(response.status).toBe(400)
    const { error } = await json(response)
    expect(error.message).toMatch(
      /^This model's maximum context length is 1000000 tokens\. However, you requested \d+ tokens/,
    )
    expect(error.type).toBe('invalid_request_error')
  })

  test('a context overflow on the OpenAI path has the context_length_exceeded code', async () => {
    server.enqueue({ contextOverflow: true })
    const response = await post(openai(), ask)
    expect(response.status).toBe(400)
    expect((await json(response)).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    })
  })
})

describe('model discovery', () => {
  test("GET /models lists the configured models in DeepSeek's shape", async () => {
    const response = await fetch(`${server.url}/models`)
    expect(await json(response)).toEqual({
      object: 'list',
      data: [
        { id: 'deepseek-v4-flash', object: 'model', owned_by: 'deepseek' },
        { id: 'deepseek-v4-pro', object: 'model', owned_by: 'deepseek' },
      ],
    })
  })

  test("GET /v1/models lists them in OpenAI's shape and needs no scripted reply", async () => {
    const response = await fetch(`${server.url}/v1/models`)
    expect((await json(response)).data[0]).toEqual({
      id: 'deepseek-v4-flash',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'system',
    })
    expect(server.pending()).toBe(0)
  })
})
