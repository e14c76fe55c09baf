import { afterEach, expect, test, vi } from 'vitest'
import {
  baseUrlFrom,
  errorDetail,
  httpFailure,
  httpFailureCode,
  IdleWatchdog,
  retryAfterMs,
  sdkHeaders,
  transportFailure,
} from './http.ts'
import { saveEnvironment } from '../../../test-support/harness/src/world.ts'

const headers = (entries: Record<string, string>) => new Headers(entries)

test('Retry-After in seconds, fractional seconds, and retry-after-ms (which wins) are milliseconds', () => {
  expect(retryAfterMs(headers({ 'retry-after': '3' }))).toBe(3000)
  expect(retryAfterMs(headers({ 'retry-after': ' 1.5 ' }))).toBe(1500)
  expect(retryAfterMs(headers({ 'retry-after': '3', 'retry-after-ms': '250.4' }))).toBe(250)
  expect(retryAfterMs(headers({ 'retry-after-ms': '0' }))).toBe(0)
})

test('Retry-After as an HTTP date is the time left until it, never negative', () => {
  const now = Date.parse('Tue, 01 Dec 2026 08:00:00 GMT')
  expect(retryAfterMs(headers({ 'retry-after': 'Tue, 01 Dec 2026 08:00:07 GMT' }), now)).toBe(7000)
  expect(retryAfterMs(headers({ 'retry-after': 'Tue, 01 Dec 2026 07:59:00 GMT' }), now)).toBe(0)
})

test('a missing, negative or unreadable Retry-After is no hint at all', () => {
  expect(retryAfterMs(headers({}))).toBeUndefined()
  expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).toBeUndefined()
  expect(retryAfterMs(headers({ 'retry-after': '-5' }))).toBeUndefined()
  expect(retryAfterMs(headers({ 'retry-after-ms': '-1', 'retry-after': '2' }))).toBe(2000)
})

test('HTTP statuses map to typed failures; a 400 naming the context window is an overflow', () => {
  expect([401, 403, 402, 429, 408, 413, 500, 503, 404].map((status) => httpFailureCode(status, ''))).toEqual([
    'AUTH',
    'AUTH',
    'QUOTA',
    'RATE_LIMIT',
    'TIMEOUT',
    'CONTEXT_WINDOW_EXCEEDED',
    'SERVER',
    'SERVER',
    'INVALID_REQUEST',
  ])
  expect(httpFailureCode(400, "This model's maximum context length is 128000 tokens")).toBe('CONTEXT_WINDOW_EXCEEDED')
  expect(httpFailureCode(400, 'messages: field required')).toBe('INVALID_REQUEST')
})

test("a failure names the provider and status, caps the provider's message and keeps the server's wait", () => {
  const failure = httpFailure('DeepSeek', 429, headers({ 'retry-after': '2' }), 'x'.repeat(50), 10)
  expect(failure.code).toBe('RATE_LIMIT')
  expect(failure.message).toBe(`DeepSeek answered HTTP 429: ${'x'.repeat(10)}…`)
  expect(failure.toJSON()).toMatchObject({ status: 429, retryAfterMs: 2000 })
  expect(httpFailure('DeepSeek', 500, undefined, '', 10).message).toBe('DeepSeek answered HTTP 500')
})

test("the provider's message is read from an OpenAI-style body, else the body is the message", () => {
  expect(errorDetail('{"error":{"message":"bad key"}}')).toBe('bad key')
  expect(errorDetail('{"message":"flat"}')).toBe('flat')
  expect(errorDetail('  <html>502</html>\n')).toBe('<html>502</html>')
})

test('a transport failure names the cause that fetch hides', () => {
  const error = Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
  })
  const failure = transportFailure('DeepSeek', 'http://127.0.0.1:1', error)
  expect(failure.code).toBe('TRANSPORT')
  expect(failure.message).toBe(
    'could not talk to DeepSeek at http://127.0.0.1:1: fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1)',
  )
})

const restoreEnvironment = saveEnvironment()
afterEach(() => {
  restoreEnvironment()
  vi.useRealTimers()
})

test('the base URL is the config, else the environment, else the public API, without trailing slashes', () => {
  delete process.env.DSH_TEST_BASE_URL
  expect(baseUrlFrom('', 'DSH_TEST_BASE_URL', 'https://api.example.com/')).toBe('https://api.example.com')
  process.env.DSH_TEST_BASE_URL = 'http://127.0.0.1:9/v1//'
  expect(baseUrlFrom('', 'DSH_TEST_BASE_URL', 'https://api.example.com')).toBe('http://127.0.0.1:9/v1')
  expect(baseUrlFrom('http://configured', 'DSH_TEST_BASE_URL', 'https://api.example.com')).toBe('http://configured')
})

test('SDK platform headers are removed and the user agent names dsh', () => {
  const sent = sdkHeaders('1.2.3')
  expect(sent['User-Agent']).toBe('dsh/1.2.3')
  expect(sent['X-Stainless-OS']).toBeNull()
  expect(sent['X-Stainless-Runtime-Version']).toBeNull()
})

test('the idle watchdog fires only after a silence of its length, and each poke starts it over', () => {
  vi.useFakeTimers()
  let fired = 0
  const watchdog = new IdleWatchdog(100, () => fired++)
  vi.advanceTimersByTime(90)
  watchdog.poke()
  vi.advanceTimersByTime(90)
  expect(fired).toBe(0)
  vi.advanceTimersByTime(20)
  expect(fired).toBe(1)
  expect(watchdog.fired).toBe(true)
  const stopped = new IdleWatchdog(100, () => fired++)
  stopped.stop()
  vi.advanceTimersByTime(500)
  expect(fired).toBe(1)
})
