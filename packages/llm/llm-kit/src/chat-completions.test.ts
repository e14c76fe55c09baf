import { expect, test } from 'vitest'
import { ChatCompletionsReader, chatUsage } from './chat-completions.ts'
import type { StreamChunk } from '@dsh/llm'

const chunk = (delta: object, finish?: string, usage?: object) => ({
  choices: [{ delta, ...(finish ? { finish_reason: finish } : {}) }],
  ...(usage ? { usage } : {}),
})

function readAll(chunks: unknown[]): StreamChunk[] {
  const reader = new ChatCompletionsReader()
  return [...chunks.flatMap((c) => reader.read(c)), reader.finish()]
}

test('reasoning (either field) and text become deltas, in the order of the stream', () => {
  expect(
    readAll([
      chunk({ reasoning_content: 'think' }),
      chunk({ reasoning: 'more' }),
      chunk({ content: 'answer' }),
      chunk({}, 'stop'),
    ]),
  ).toEqual([
    { type: 'reasoning-delta', text: 'think' },
    { type: 'reasoning-delta', text: 'more' },
    { type: 'text-delta', text: 'answer' },
    { type: 'finish', reason: 'stop' },
  ])
})

test('tool calls keep their index, id, name and argument pieces; a `stop` after calls means tool-calls', () => {
  const out = readAll([
    chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'bash', arguments: '{"comm' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'and":"ls"}' } }] }),
    chunk({}, 'stop'),
  ])
  expect(out).toEqual([
    { type: 'tool-call-delta', index: 0, callId: 'c1', name: 'bash', argumentsDelta: '{"comm' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: 'and":"ls"}' },
    { type: 'finish', reason: 'tool-calls' },
  ])
})

test('the finish waits for usage that follows it in a chunk of its own', () => {
  const reader = new ChatCompletionsReader()
  reader.read(chunk({ content: 'hi' }, 'length'))
  reader.read({
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 40 } },
  })
  expect(reader.finish()).toEqual({
    type: 'finish',
    reason: 'max-tokens',
    usage: { input: 60, output: 5, cacheRead: 40, cacheWrite: 0 },
  })
})

test("cache hits count as reads, DeepSeek's field or OpenAI's, never as input", () => {
  expect(chatUsage({ prompt_tokens: 50, completion_tokens: 3, prompt_cache_hit_tokens: 20 })).toEqual({
    input: 30,
    output: 3,
    cacheRead: 20,
    cacheWrite: 0,
  })
  expect(chatUsage(undefined)).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
  // The reasoning part of the output when the server reports it (0 is a count); absent when it does not.
  expect(
    chatUsage({ prompt_tokens: 5, completion_tokens: 40, completion_tokens_details: { reasoning_tokens: 32 } }),
  ).toEqual({ input: 5, output: 40, cacheRead: 0, cacheWrite: 0, reasoning: 32 })
  expect(
    chatUsage({ prompt_tokens: 5, completion_tokens: 4, completion_tokens_details: { reasoning_tokens: 0 } }),
  ).toMatchObject({ reasoning: 0 })
  expect(chatUsage({ prompt_tokens: 5, completion_tokens: 4 })).not.toHaveProperty('reasoning')
})

test('an overloaded finish is a SERVER error, an unknown one an INVALID_REQUEST error naming it', () => {
  expect(readAll([chunk({}, 'insufficient_system_resource')]).at(-1)).toEqual({
    type: 'finish',
    reason: 'error',
    error: { code: 'SERVER', message: 'the model stopped with finish_reason "insufficient_system_resource"' },
  })
  expect(readAll([chunk({}, 'content_filter')]).at(-1)).toMatchObject({
    reason: 'error',
    error: { code: 'INVALID_REQUEST', message: expect.stringContaining('content_filter') },
  })
})

test('a stream that ends without a finish reason is a TRANSPORT failure', () => {
  const reader = new ChatCompletionsReader()
  reader.read(chunk({ content: 'cut' }))
  expect(() => reader.finish()).toThrow(
    expect.objectContaining({ code: 'TRANSPORT', message: 'the stream ended before the model said it had finished' }),
  )
})
