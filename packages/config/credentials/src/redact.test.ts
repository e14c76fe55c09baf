import { expect, test } from 'vitest'
import { redactSecrets } from './redact.ts'

test('every occurrence of a secret is replaced by a marker naming its credential', () => {
  const out = redactSecrets('auth sk-abc123 failed; retry with sk-abc123', [['sk-abc123', 'DEEPSEEK_API_KEY']])
  expect(out).toBe('auth «redacted:DEEPSEEK_API_KEY» failed; retry with «redacted:DEEPSEEK_API_KEY»')
})

test('a secret containing another is replaced whole, not in pieces', () => {
  const out = redactSecrets('key=token-123-extended', [
    ['token-123', 'SHORT'],
    ['token-123-extended', 'LONG'],
  ])
  expect(out).toBe('key=«redacted:LONG»')
})

test('an empty value redacts nothing', () => {
  expect(redactSecrets('plain text', [['', 'EMPTY']])).toBe('plain text')
})
