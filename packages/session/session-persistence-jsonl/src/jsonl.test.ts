import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { tempDir } from '@dsh/test-harness/world'
import { parseLog, truncateTornTail } from './jsonl.ts'

const ID = 'stream_test'
const HEADER = JSON.stringify({ format: 'dsh-session', version: 1, id: ID, cwd: '/w', createdAt: 1 })
/** Larger than the reader's chunk, so lines and characters straddle chunk boundaries. */
const LINES = 6000

function event(seq: number): string {
  // Multi-byte characters throughout: a chunk boundary falls inside one of them somewhere.
  return JSON.stringify({ seq, time: seq, type: 'note', data: { text: `${seq} ${'é☃😀'.repeat(60)}` } })
}

function logWith(lines: string[], tail = ''): string {
  const file = join(tempDir('dsh-jsonl-'), 'session.jsonl')
  writeFileSync(file, lines.join('\n') + '\n' + tail)
  return file
}

const events = Array.from({ length: LINES }, (_, seq) => event(seq))

describe('the streamed log reader', () => {
  test('reads every line of a multi-chunk log, characters split across chunks intact', async () => {
    const log = await parseLog(logWith([HEADER, ...events]), ID)
    expect(log.events).toHaveLength(LINES)
    expect(log.events.map((e: any) => e.seq)).toEqual(events.map((_, seq) => seq))
    expect((log.events[LINES - 1] as any).data.text).toBe(JSON.parse(events[LINES - 1]!).data.text)
    expect(log.tornBytes).toBe(0)
  })

  test('a torn tail (no newline, or a last line that does not parse) is reported and cut to the line boundary', async () => {
    const file = logWith([HEADER, ...events], '{"seq":6000,"ti')
    const whole = readFileSync(file)
    const log = await parseLog(file, ID)
    expect(log.events).toHaveLength(LINES)
    expect(log.tornBytes).toBe('{"seq":6000,"ti'.length)
    await truncateTornTail(file, log)
    expect(readFileSync(file).equals(whole.subarray(0, whole.length - log.tornBytes))).toBe(true)

    const cutLine = await parseLog(logWith([HEADER, ...events, '{"seq":6000,"ti']), ID)
    expect(cutLine.events).toHaveLength(LINES)
    expect(cutLine.tornBytes).toBe('{"seq":6000,"ti'.length + 1)
  })

  test('a bad line in the middle is corruption named by its line, not a torn tail', async () => {
    const broken = [...events]
    broken[4000] = '{"seq":4000, not json'
    const file = logWith([HEADER, ...broken])
    await expect(parseLog(file, ID)).rejects.toMatchObject({
      code: 'SESSION_CORRUPT',
      message: `${file}:4002: not a JSON line`,
    })
  })

  test('a missing file or a foreign header is refused by name', async () => {
    const dir = tempDir('dsh-jsonl-')
    await expect(parseLog(join(dir, 'session.jsonl'), ID)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    const file = logWith([HEADER.replace(ID, 'someone_else'), ...events.slice(0, 3)])
    await expect(parseLog(file, ID)).rejects.toMatchObject({
      code: 'SESSION_CORRUPT',
      message: `${file}:1: not a dsh session header for ${ID}`,
    })
  })
})
