import { expect, test } from 'vitest'
import { basicPassword, readCookie, SignIns } from './sign-in.ts'

test('a code is good once, within its lifetime, and never again', () => {
  const signIns = new SignIns(60_000)
  const code = signIns.issueCode(1_000)
  expect(signIns.redeem(code, 60_999)).toBe('ok')
  expect(signIns.redeem(code, 61_000)).toBe('used')
  expect(signIns.redeem('not-a-code')).toBe('unknown')
})

test('a code presented after its lifetime is expired, and spent all the same', () => {
  const signIns = new SignIns(60_000)
  const code = signIns.issueCode(1_000)
  expect(signIns.redeem(code, 61_000)).toBe('expired')
  expect(signIns.redeem(code, 1_500)).toBe('used')
})

test('codes long expired are forgotten when a new one is issued', () => {
  const signIns = new SignIns(10)
  const old = signIns.issueCode(0)
  signIns.issueCode(100)
  expect(signIns.redeem(old, 100)).toBe('unknown')
})

test('a session is known by its exact value only', () => {
  const signIns = new SignIns(60_000)
  const value = signIns.openSession()
  expect(signIns.isSession(value)).toBe(true)
  expect(signIns.isSession(value.slice(1))).toBe(false)
  expect(signIns.isSession(undefined)).toBe(false)
  expect(signIns.isSession(signIns.issueCode())).toBe(false)
})

test('the cookie and the Basic credential are read from their headers', () => {
  expect(readCookie('a=1; dsh_web_3080=abc; dsh_web_3081=def', 'dsh_web_3080')).toBe('abc')
  expect(readCookie('xdsh_web_3080=abc', 'dsh_web_3080')).toBeUndefined()
  expect(readCookie(undefined, 'dsh_web_3080')).toBeUndefined()
  expect(basicPassword(`Basic ${Buffer.from('dsh:co:de').toString('base64')}`)).toBe('co:de')
  expect(basicPassword('Bearer abc')).toBeUndefined()
  expect(basicPassword(`Basic ${Buffer.from('nocolon').toString('base64')}`)).toBeUndefined()
})
