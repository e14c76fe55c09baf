// The retry wording every surface shows; moved here from @dsh/acp with its assertions.
import { expect, test } from 'vitest'
import { retryText, retryWords } from './retry.ts'

test('a retry notice counts from attempt and maxRetries, not from the reason text', () => {
  expect(
    retryText({
      attempt: 2,
      maxRetries: 4,
      code: 'RATE_LIMIT',
      delayMs: 1500,
      reason: 'RATE_LIMIT: the provider asked to wait 1500 ms',
    }),
  ).toBe('Model request failed (RATE_LIMIT); retrying in 1.5 s — retry 2 of 4')
})

test('a retry from a log written before maxRetries was recorded counts only the attempt, whatever its reason says', () => {
  expect(retryText({ attempt: 1, code: 'SERVER', delayMs: 40, reason: 'SERVER: retry 1 of 9' })).toBe(
    'Model request failed (SERVER); retrying in 40 ms — retry 1',
  )
})

test('fields of the wrong type are left out rather than shown', () => {
  expect(retryWords({ attempt: '2', code: '', delayMs: null })).toEqual({})
  expect(retryText({})).toBe('Model request failed; retrying')
})
