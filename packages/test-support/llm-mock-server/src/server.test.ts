import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { serverTimeMs, startMockServer, type MockServer, type RecordedRequest } from './index.ts'
import { json, post, readSse } from './test-support/sse.ts'

let server: MockServer
beforeEach(async () => {
  server = await startMockServer()
})
afterEach(() => server.close())

const chat = () => `${server.url}/chat/completions`
const messages = () => `${server.url}/v1/messages`
const ask = { model: 'deepseek-v4-flash', messages: [{ role: 'user', content: 'hi' }], stream: true }

async function until(condition: () => boolean, what: string) {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(10)
  if (!condition()) throw new Error(`timed out waiting for ${what}`)
}

describe('scripting', () => {
  test('a request with nothing scripted gets a 500 saying "no scripted reply for request #N"', async () => {
    const response = await post(`${server.url}/v1/messages`, ask, { 'anthropic-version': '2023-06-01' })
    expect(response.status).toBe(500)
    const body = await json(response)
    expect(body.type).toBe('error')
    expect(body.error.message).toBe('llm-mock-server: no scripted reply for request #0 (POST /v1/messages)')
  })

  test('replies are consumed first in, first out by requests of either protocol', async () => {
    server.enqueue({ text: 'one' }, { text: 'two' })
    expect(server.pending()).toBe(2)
    const first = await post(messages(), { ...ask, stream: false })
    const second = await post(chat(), { ...ask, stream: false })
    expect((await json(first)).content[0].text).toBe('one')
    expect((await json(second)).choices[0].message.content).toBe('two')
    expect(server.pending()).toBe(0)
  })

  test('the responder answers when the queue is empty, and sees the request already recorded', async () => {
    let recordedFirst = false
    server.respondWith((request) => {
      recordedFirst = server.requests.includes(request)
      return { text: `you said ${request.body.messages[0].content}` }
    })
    server.enqueue({ text: 'queued' })
    expect((await json(await post(chat(), { ...ask, stream: false }))).choices[0].message.content).toBe('queued')
    expect((await json(await post(chat(), { ...ask, stream: false }))).choices[0].message.content).toBe('you said hi')
    expect(recordedFirst).toBe(true)
  })

  test('a responder that throws gets a 500 naming the failure', async () => {
    server.respondWith(() => {
      throw new Error('boom')
    })
    const response = await post(chat(), ask)
    expect(response.status).toBe(500)
    expect((await json(response)).error.message).toBe('llm-mock-server: the responder failed for request #0: boom')
  })

  test('with repeat the last reply answers again once the queue is empty; without it the next request fails', async () => {
    const repeating = await startMockServer({ repeat: true })
    try {
      repeating.enqueue({ text: 'again' })
      for (let i = 0; i < 3; i++)
        expect(
          (await json(await post(`${repeating.url}/chat/completions`, { ...ask, stream: false }))).choices[0].message
            .content,
        ).toBe('again')
    } finally {
      await repeating.close()
    }
    server.enqueue({ text: 'once' })
    expect((await post(chat(), ask)).status).toBe(200)
    expect((await post(chat(), ask)).status).toBe(500)
  })

  test('reset forgets the queue, the responder and the recorded requests', async () => {
    server.enqueue({ text: 'a' })
    server.respondWith(() => ({ text: 'b' }))
    await fetch(`${server.url}/models`)
    server.reset()
    expect(server.pending()).toBe(0)
    expect(server.requests).toEqual([])
    expect((await post(chat(), ask)).status).toBe(500)
  })

  test('a misspelt reply key is refused at enqueue with MOCK_BAD_SCRIPT naming the key', () => {
    expect(() => server.enqueue({ txt: 'hello' } as never)).toThrow(
      expect.objectContaining({ code: 'MOCK_BAD_SCRIPT', message: expect.stringContaining('unknown key "txt"') }),
    )
    expect(() => server.enqueue({ error: { status: 200 } })).toThrow(/error\.status: an HTTP error status/)
    expect(server.pending()).toBe(0)
  })

  test('an unknown option is refused with MOCK_BAD_OPTIONS', async () => {
    await expect(startMockServer({ chunkchars: 2 } as never)).rejects.toMatchObject({
      code: 'MOCK_BAD_OPTIONS',
      message: expect.stringContaining('chunkchars'),
    })
  })
})

describe('recording', () => {
  test('every request is recorded with protocol, method, path, headers and parsed body', async () => {
    server.enqueue({ text: 'x' })
    await post(`${chat()}?trace=1`, ask, { authorization: 'Bearer sk-test' })
    await fetch(`${server.url}/nowhere`)
    expect(server.requests).toHaveLength(2)
    const [first, second] = server.requests
    expect(first).toMatchObject({
      index: 0,
      protocol: 'openai',
      method: 'POST',
      path: '/chat/completions?trace=1',
      body: ask,
    })
    expect(first.headers.authorization).toBe('Bearer sk-test')
    expect(second).toMatchObject({ index: 1, method: 'GET', path: '/nowhere', body: undefined })
  })

  test("an unknown endpoint is a 404 in the provider's shape naming the endpoints served", async () => {
    const response = await post(`${server.url}/v1/completions`, ask)
    expect(response.status).toBe(404)
    expect((await json(response)).error.message).toMatch(/no such endpoint \(POST \/v1\/completions\)/)
  })

  test('a body that is not JSON is a 400 and is recorded as text', async () => {
    const response = await fetch(chat(), { method: 'POST', body: 'not json' })
    expect(response.status).toBe(400)
    expect(server.requests[0].body).toBe('not json')
  })

  test('waitForRequests resolves once enough requests arrived and times out with MOCK_TIMEOUT otherwise', async () => {
    const waiting = server.waitForRequests(2)
    await fetch(`${server.url}/models`)
    await fetch(`${server.url}/models`)
    expect(await waiting).toHaveLength(2)
    await expect(server.waitForRequests(3, 50)).rejects.toMatchObject({ code: 'MOCK_TIMEOUT' })
  })
})

describe('timing', () => {
  test('delayMs holds the first byte back; receivedAt ≤ firstByteAt ≤ endedAt', async () => {
    server.enqueue({ text: 'late', delayMs: 60 })
    await readSse(await post(chat(), ask))
    await until(() => server.requests[0].timing.endedAt !== undefined, 'the end mark')
    const { receivedAt, firstByteAt, endedAt } = server.requests[0].timing
    expect(firstByteAt! - receivedAt).toBeGreaterThanOrEqual(55)
    expect(endedAt!).toBeGreaterThanOrEqual(firstByteAt!)
  })

  test('chunkDelayMs spaces the events out', async () => {
    server.enqueue({ text: ['a', 'b'], chunkDelayMs: 25 })
    const arrivals: number[] = []
    await readSse(await post(chat(), ask), () => arrivals.push(performance.now()))
    // role, a, b, finish, [DONE]: four gaps of 25 ms.
    expect(arrivals).toHaveLength(5)
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThanOrEqual(90)
  })

  test("serverTimeMs sums each request's time from arrival to the end of its response", () => {
    const at = (receivedAt: number, endedAt?: number): RecordedRequest => ({
      index: 0,
      protocol: 'openai',
      method: 'POST',
      path: '/',
      headers: {},
      body: {},
      timing: { receivedAt, endedAt },
    })
    expect(serverTimeMs([at(10, 15), at(20, 40)])).toBe(25)
    expect(serverTimeMs([at(10)], 13)).toBe(3)
  })
})

describe('transport failures', () => {
  test('a stalled stream sends N events and then nothing until the client aborts, and the server keeps serving', async () => {
    server.enqueue({ text: ['a', 'b', 'c'], stallAfterChunks: 2 }, { text: 'after' })
    const abort = new AbortController()
    const response = await post(chat(), ask, {}, abort.signal)
    let count = 0
    const reading = readSse(response, () => count++)
    await until(() => count === 2, 'two events')
    await sleep(150)
    expect(count).toBe(2)
    expect(server.requests[0].timing.endedAt).toBeUndefined()
    abort.abort()
    const { events, error } = await reading
    expect(events).toHaveLength(2)
    expect(error?.name).toBe('AbortError')
    await until(() => server.requests[0].timing.endedAt !== undefined, 'the server to see the abort')
    const next = await readSse(await post(chat(), ask))
    expect(next.events.at(-1)?.data).toBe('[DONE]')
  })

  test('close() ends a stalled stream instead of waiting for the client', async () => {
    server.enqueue({ text: 'a', stallAfterChunks: 1 })
    const reading = readSse(await post(chat(), ask))
    await server.waitForRequests(1)
    await server.close()
    const { events, error } = await reading
    expect(events).toHaveLength(1)
    expect(error).toBeDefined()
  })

  test('a cut stream sends N events and then the socket ends early, without [DONE]', async () => {
    server.enqueue({ text: ['a', 'b', 'c'], cutAfterChunks: 3 })
    const { events, error } = await readSse(await post(chat(), ask))
    expect(events.map((event) => JSON.parse(event.data).choices[0].delta.content)).toEqual(['', 'a', 'b'])
    expect(error).toBeInstanceOf(TypeError)
  })

  test('an Anthropic stream can be cut too, before message_stop', async () => {
    server.enqueue({ text: 'abcdefgh', cutAfterChunks: 4 })
    const { events, error } = await readSse(await post(messages(), ask, { 'anthropic-version': '2023-06-01' }))
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
    ])
    expect(error).toBeDefined()
  })
})
