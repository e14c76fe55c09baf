// The framing: lines out of a byte stream, whatever the chunking, with a byte limit per line.
import { expect, test } from 'vitest'
import { LineSplitter } from './lines.ts'

function split(chunks: Buffer[], maxBytes = 1024) {
  const out: string[] = []
  const splitter = new LineSplitter(maxBytes, 8, {
    line: (text) => out.push(text),
    tooLong: (start, limit) => out.push(`TOO LONG ${limit}: ${start}`),
  })
  for (const chunk of chunks) splitter.push(chunk)
  splitter.end()
  return out
}

test('a UTF-8 character split across chunks and CRLF endings come out whole', () => {
  const bytes = Buffer.from('{"text":"héllo ✓"}\r\n{"b":2}\n\n')
  const chunks = Array.from(bytes, (byte) => Buffer.from([byte]))
  expect(split(chunks)).toEqual(['{"text":"héllo ✓"}', '{"b":2}'])
})

test('a line over the limit is reported once with its start, and the following line survives', () => {
  const long = `${'x'.repeat(40)}\n{"ok":true}\n`
  expect(split([Buffer.from(long.slice(0, 10)), Buffer.from(long.slice(10))], 16)).toEqual([
    'TOO LONG 16: xxxxxxxx',
    '{"ok":true}',
  ])
})

test('the last line without a newline still counts at the end of input (a cut one is then a parse error, not silence)', () => {
  expect(split([Buffer.from('{"a":1}\n{"b":')])).toEqual(['{"a":1}', '{"b":'])
  expect(split([Buffer.from('{"a":1}\n{"b":2}')])).toEqual(['{"a":1}', '{"b":2}'])
})
