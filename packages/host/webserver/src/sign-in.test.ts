import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { basicPassword, readCookie, SignIns, SignOuts } from './sign-in.ts'

const DAY = 24 * 3600_000
const signOutsFile = () => join(mkdtempSync(join(tmpdir(), 'dsh-signouts-')), 'web-signouts.json')
const makeSignIns = (codeTtlMs = 60_000, key?: Buffer, file = signOutsFile()) =>
  new SignIns(codeTtlMs, 30 * DAY, new SignOuts(file), key)

test('a code is good once, within its lifetime, and never again', () => {
  const signIns = makeSignIns(60_000)
  const code = signIns.issueCode(1_000)
  expect(signIns.redeem(code, 60_999)).toBe('ok')
  expect(signIns.redeem(code, 61_000)).toBe('used')
  expect(signIns.redeem('not-a-code')).toBe('unknown')
})

test('a code presented after its lifetime is expired, and spent all the same', () => {
  const signIns = makeSignIns(60_000)
  const code = signIns.issueCode(1_000)
  expect(signIns.redeem(code, 61_000)).toBe('expired')
  expect(signIns.redeem(code, 1_500)).toBe('used')
})

test('codes long expired are forgotten when a new one is issued', () => {
  const signIns = makeSignIns(10)
  const old = signIns.issueCode(0)
  signIns.issueCode(100)
  expect(signIns.redeem(old, 100)).toBe('unknown')
})

test('a session is known by its exact value only', () => {
  const signIns = makeSignIns(60_000)
  const value = signIns.openSession()
  expect(signIns.isSession(value)).toBe(true)
  expect(signIns.isSession(value.slice(1))).toBe(false)
  expect(signIns.isSession(value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A'))).toBe(false)
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

test('a session signed with one key is good under that key in another process, until it expires or is signed out there', () => {
  const key = Buffer.alloc(32, 7)
  const file = signOutsFile()
  const first = makeSignIns(60_000, key, file)
  const value = first.openSession(1_000)
  const second = makeSignIns(60_000, key, file)
  expect(second.sessionOf(value, 2_000)).toBe('ok')
  expect(second.sessionOf(value, 1_000 + 30 * DAY)).toBe('expired')
  // Moving the expiry breaks the signature: the value is not believed at all.
  const [id, at, mac] = value.split('.')
  expect(second.sessionOf(`${id}.${Number(at) + DAY}.${mac}`, 2_000)).toBe('invalid')
  expect(makeSignIns(60_000, Buffer.alloc(32, 8), file).sessionOf(value, 2_000)).toBe('invalid')
  expect(second.signOut(value, 2_000)).toBe(true)
  expect(first.sessionOf(value, 3_000)).toBe('signed-out')
  expect(makeSignIns(60_000, key, file).sessionOf(value, 3_000)).toBe('signed-out')
  expect(first.sessionOf(first.openSession(3_000), 4_000)).toBe('ok')
})

test('an unreadable sign-out list refuses every session, naming the file', () => {
  const file = signOutsFile()
  const signIns = makeSignIns(60_000, Buffer.alloc(32, 7), file)
  const value = signIns.openSession()
  writeFileSync(file, '{"x": "not a time"}')
  expect(() => signIns.sessionOf(value)).toThrow(file)
})
