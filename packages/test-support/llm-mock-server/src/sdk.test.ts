// Wire compatibility, proven by the providers' own clients: if the official SDKs assemble our streams
// into the message we scripted, the adapters built on the same wire will see what the real APIs send.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { startMockServer, type MockServer } from './index.ts'

let server: MockServer
beforeEach(async () => {
  server = await startMockServer()
})
afterEach(() => server.close())

const scripted = {
  reasoning: 'Look first.',
  text: 'Reading the file.',
  toolCalls: [{ name: 'read_file', arguments: { path: 'src/index.ts' }, pieces: 4 }],
  usage: { input: 30, output: 12, cacheRead: 70 },
}

describe('the official openai client (7.x)', () => {
  const client = (baseURL: string) => new OpenAI({ baseURL, apiKey: 'sk-mock', maxRetries: 0 })
  const request = {
    model: 'deepseek-v4-flash',
    messages: [{ role: 'user' as const, content: 'read it' }],
    stream_options: { include_usage: true },
  }

  for (const [dialect, path] of [
    ['DeepSeek', ''],
    ['OpenAI', '/v1'],
  ] as const) {
    test(`assembles a ${dialect} stream into the scripted text, tool call and usage`, async () => {
      server.enqueue(scripted)
      const completion = await client(server.url + path)
        .chat.completions.stream(request)
        .finalChatCompletion()
      const [choice] = completion.choices
      expect(choice.finish_reason).toBe('tool_calls')
      expect(choice.message.content).toBe('Reading the file.')
      expect(choice.message.tool_calls).toEqual([
        {
          id: 'call_mock_0_0',
          type: 'function',
          function: { name: 'read_file', arguments: '{"path":"src/index.ts"}' },
        },
      ])
      expect(completion.usage).toMatchObject({
        prompt_tokens: 100,
        completion_tokens: 12,
        prompt_tokens_details: { cached_tokens: 70 },
      })
      expect(server.requests[0].path).toBe(`${path}/chat/completions`)
    })
  }

  test('sees a 429 as a RateLimitError carrying the retry-after header', async () => {
    server.enqueue({ error: { status: 429, retryAfter: 5 } })
    const error = await client(server.url)
      .chat.completions.create({ ...request, stream: true })
      .catch((caught) => caught)
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error.headers.get('retry-after')).toBe('5')
    expect(server.requests).toHaveLength(1)
  })
})

describe('the official @anthropic-ai/sdk client', () => {
  const client = () => new Anthropic({ baseURL: server.url, apiKey: 'mock', maxRetries: 0 })
  const request = { model: 'claude-mock', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'read it' }] }

  test('assembles the stream into thinking, text and tool_use blocks with the scripted usage', async () => {
    server.enqueue({ ...scripted, usage: { ...scripted.usage, cacheWrite: 9 } })
    const message = await client().messages.stream(request).finalMessage()
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Look first.', signature: expect.any(String) },
      { type: 'text', text: 'Reading the file.' },
      { type: 'tool_use', id: 'toolu_mock_0_0', name: 'read_file', input: { path: 'src/index.ts' } },
    ])
    expect(message.stop_reason).toBe('tool_use')
    expect(message.usage).toMatchObject({
      input_tokens: 30,
      output_tokens: 12,
      cache_read_input_tokens: 70,
      cache_creation_input_tokens: 9,
    })
    expect(server.requests[0].headers['anthropic-version']).toBeDefined()
  })

  test("sees a context overflow as a BadRequestError with the API's message", async () => {
    server.enqueue({ contextOverflow: true })
    const error = await client()
      .messages.create({ ...request, stream: true })
      .catch((caught) => caught)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect(error.status).toBe(400)
    expect(error.error.error.message).toMatch(/^prompt is too long/)
  })
})
