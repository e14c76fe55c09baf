import { expect, test } from 'vitest'
import { CappedOutput } from './capped-output.ts'

test('output up to the cap is kept whole', () => {
  const output = new CappedOutput(10)
  output.push('01234')
  output.push(Buffer.from('56789'))
  expect(output.truncated).toBe(false)
  expect(output.text()).toBe('0123456789')
})

test('output over the cap keeps the first and last halves and counts the cut bytes', () => {
  const output = new CappedOutput(10)
  for (const chunk of ['abc', 'defgh', 'ijklmnop', 'qrstuvwxyz']) output.push(chunk)
  expect(output.truncated).toBe(true)
  expect(output.totalBytes).toBe(26)
  expect(output.text()).toBe('abcde\n[… 16 bytes cut …]\nvwxyz')
})
