import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
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

describe('with a full output file', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'dsh-full-'))

  test('nothing is written while the output stays under the cap', () => {
    const path = join(dir(), 'out.txt')
    const output = new CappedOutput(10, { path, ceilingBytes: 100 })
    output.push('0123456789')
    expect(output.saved()).toBeUndefined()
    expect(existsSync(path)).toBe(false)
  })

  test('past the cap every byte reaches the file, what came before included', () => {
    const path = join(dir(), 'sub', 'out.txt')
    const output = new CappedOutput(10, { path, ceilingBytes: 100 })
    for (const chunk of ['abc', 'defgh', 'ijklmnop', 'qrstuvwxyz']) output.push(chunk)
    expect(output.saved()).toEqual({ path, bytes: 26, complete: true })
    expect(readFileSync(path, 'utf8')).toBe('abcdefghijklmnopqrstuvwxyz')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(output.text()).toBe('abcde\n[… 16 bytes cut …]\nvwxyz')
  })

  test('the ceiling bounds the file and the result says it is incomplete', () => {
    const path = join(dir(), 'out.txt')
    const output = new CappedOutput(4, { path, ceilingBytes: 7 })
    for (const chunk of ['abc', 'defgh', 'ijk']) output.push(chunk)
    expect(output.saved()).toEqual({ path, bytes: 7, complete: false })
    expect(readFileSync(path, 'utf8')).toBe('abcdefg')
  })

  test("an older run's file at the path is removed before the run, even when this run writes nothing", () => {
    const path = join(dir(), 'out.txt')
    writeFileSync(path, 'stale')
    const output = new CappedOutput(10, { path, ceilingBytes: 100 })
    output.push('short')
    expect(output.saved()).toBeUndefined()
    expect(existsSync(path)).toBe(false)
  })

  test('terminal output is saved with the LF line ends the program printed, a CRLF split across chunks included', () => {
    const path = join(dir(), 'out.txt')
    const output = new CappedOutput(4, { path, ceilingBytes: 100, fromTerminal: true })
    for (const chunk of ['one\r', '\ntwo\r\n', 'three\r', '\nlone\r']) output.push(chunk)
    expect(output.saved()).toMatchObject({ complete: true })
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\nthree\nlone\r')
  })
})
