import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { startMockServer, type MockServer } from './index.ts'
import { json, post, readSse, type SseEvent } from './test-support/sse.ts'

let server: MockServer
beforeEach(async () => {
  server = await startMockServer()
})
afterEach(() => server.close())

const messages = () => `${server.url}/v1/messages`
const headers = { 'anthropic-version': '2023-06-01', 'x-api-key': 'mock' }
const ask = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], stream: true }

async function stream(body: unknown = ask) {
  const response = await post(messages(), body, headers)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  const { events, error } = await readSse(response)
  expect(error).toBeUndefined()
  // Every event's name is its payload's type.
  for (const event of events) expect(JSON.parse(event.data).type).toBe(event.event)
  return events
}
const data = (events: SseEvent[]) => events.map((event) => JSON.parse(event.data))

describe('Anthropic streams (POST /v1/messages)', () => {
  test('a text reply is message_start, one text block of several deltas, message_delta and message_stop', async () => {
    server.enqueue({ text: 'Hello, world', usage: { input: 20, output: 4, cacheRead: 100, cacheWrite: 50 } })
    const usage = { input_tokens: 20, cache_creation_input_tokens: 50, cache_read_input_tokens: 100 }
    expect(data(await stream())).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_mock_0',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hell' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'o, w' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'orld' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { ...usage, output_tokens: 4 },
      },
      { type: 'message_stop' },
    ])
  })

  test('reasoning is a thinking block of thinking deltas closed by a signature delta, before the text block', async () => {
    server.enqueue({ reasoning: ['Let me ', 'think.'], text: ['Yes.'] })
    const events = data(await stream())
    const deltas = events.filter((event) => event.type === 'content_block_delta')
    expect(deltas.map((event) => [event.index, event.delta.type])).toEqual([
      [0, 'thinking_delta'],
      [0, 'thinking_delta'],
      [0, 'signature_delta'],
      [1, 'text_delta'],
    ])
    expect(
      deltas
        .slice(0, 2)
        .map((event) => event.delta.thinking)
        .join(''),
    ).toBe('Let me think.')
    expect(deltas[2].delta.signature).toMatch(/^[A-Za-z0-9+/]+=*$/)
    expect(events.find((event) => event.type === 'content_block_start' && event.index === 0).content_block).toEqual({
      type: 'thinking',
      thinking: '',
      signature: '',
    })
  })

  test('a tool call is a tool_use block whose input_json_delta pieces rejoin to valid JSON, ending with stop reason tool_use', async () => {
    server.enqueue({
      text: 'Reading.',
      toolCalls: [
        { name: 'read_file', arguments: { path: 'src/a.ts' }, pieces: 5 },
        { id: 'toolu_given', name: 'bash', arguments: { command: 'ls' } },
      ],
    })
    const events = data(await stream())
    expect(events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block)).toEqual([
      { type: 'text', text: '' },
      { type: 'tool_use', id: 'toolu_mock_0_0', name: 'read_file', input: {} },
      { type: 'tool_use', id: 'toolu_given', name: 'bash', input: {} },
    ])
    const pieces = (index: number) =>
      events
        .filter((event) => event.type === 'content_block_delta' && event.index === index)
        .map((event) => event.delta)
    expect(pieces(1).every((delta) => delta.type === 'input_json_delta')).toBe(true)
    // The API opens each tool input with an empty partial_json, then the pieces.
    expect(pieces(1).map((delta) => delta.partial_json)[0]).toBe('')
    expect(pieces(1)).toHaveLength(6)
    expect(
      JSON.parse(
        pieces(1)
          .map((delta) => delta.partial_json)
          .join(''),
      ),
    ).toEqual({ path: 'src/a.ts' })
    expect(
      JSON.parse(
        pieces(2)
          .map((delta) => delta.partial_json)
          .join(''),
      ),
    ).toEqual({ command: 'ls' })
    expect(events.at(-2).delta.stop_reason).toBe('tool_use')
  })

  test('finish "length" is stop reason max_tokens', async () => {
    server.enqueue({ text: 'Trunc', finish: 'length' })
    expect(data(await stream()).at(-2).delta.stop_reason).toBe('max_tokens')
  })

  test('an empty reply has no content block: message_start, ping, message_delta, message_stop', async () => {
    server.enqueue({ empty: true })
    expect((await stream()).map((event) => event.event)).toEqual([
      'message_start',
      'ping',
      'message_delta',
      'message_stop',
    ])
  })

  test('stream: false gets the message body with thinking, text and tool_use blocks', async () => {
    server.enqueue({
      reasoning: 'Hmm.',
      text: 'Reading it.',
      toolCalls: [{ name: 'read_file', arguments: '{"path":"x"}' }],
      usage: { input: 7, output: 11, cacheRead: 3 },
    })
    const response = await post(messages(), { ...ask, stream: false }, headers)
    expect(await json(response)).toEqual({
      id: 'msg_mock_0',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'Hmm.', signature: expect.any(String) },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'toolu_mock_0_0', name: 'read_file', input: { path: 'x' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 11 },
    })
  })

  test('stream: false refuses tool arguments that are not a JSON object, with a 500 naming the tool', async () => {
    server.enqueue({ toolCalls: [{ name: 'broken', arguments: '{"path":' }] })
    const response = await post(messages(), { ...ask, stream: false }, headers)
    expect(response.status).toBe(500)
    expect((await json(response)).error.message).toMatch(/tool call "broken" has arguments that are not a JSON object/)
  })
})

describe('errors in the Anthropic shape', () => {
  const expectError = async (status: number, type: string) => {
    const response = await post(messages(), ask, headers)
    expect(response.status).toBe(status)
    expect(response.headers.get('request-id')).toBe(`req_mock_${server.requests.length - 1}`)
    const body = await json(response)
    expect(body).toEqual({
      type: 'error',
      error: { type, message: expect.any(String) },
      request_id: response.headers.get('request-id'),
    })
    return body
  }

  test('401 is an authentication_error', async () => {
    server.enqueue({ error: { status: 401 } })
    await expectError(401, 'authentication_error')
  })

  test('402 is a billing_error', async () => {
    server.enqueue({ error: { status: 402 } })
    await expectError(402, 'billing_error')
  })

  test('429 with retryAfter is a rate_limit_error with a retry-after header', async () => {
    server.enqueue({ error: { status: 429, retryAfter: 3 } })
    const response = await post(messages(), ask, headers)
    expect(response.headers.get('retry-after')).toBe('3')
    expect((await json(response)).error.type).toBe('rate_limit_error')
  })

  test('500 is an api_error and 529 an overloaded_error', async () => {
    server.enqueue({ error: { status: 500 } }, { error: { status: 529 } })
    await expectError(500, 'api_error')
    await expectError(529, 'overloaded_error')
  })

  test('a context overflow is the 400 "prompt is too long" invalid_request_error', async () => {
    server.enqueue({ contextOverflow: true })
    const body = await expectError(400, 'invalid_request_error')
    expect(body.error.message).toMatch(/^prompt is too long: \d+ tokens > 1000000 maximum$/)
  })
})

test("GET /v1/models with an anthropic-version header lists the models in Anthropic's shape", async () => {
  const server2 = await startMockServer({ models: ['claude-a', 'claude-b'] })
  try {
    const response = await fetch(`${server2.url}/v1/models`, { headers })
    expect(await json(response)).toEqual({
      data: [
        { type: 'model', id: 'claude-a', display_name: 'claude-a', created_at: expect.any(String) },
        { type: 'model', id: 'claude-b', display_name: 'claude-b', created_at: expect.any(String) },
      ],
      has_more: false,
      first_id: 'claude-a',
      last_id: 'claude-b',
    })
    expect(server2.requests[0].protocol).toBe('anthropic')
  } finally {
    await server2.close()
  }
})
