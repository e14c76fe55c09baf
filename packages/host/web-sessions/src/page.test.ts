import { expect, test } from 'vitest'
import type { WireEvent } from '@dsh/web-protocol'
import { pageOf } from './page.ts'

let seq = 0
const at = (type: string, data: unknown = {}): WireEvent => ({ type, seq: seq++, time: 0, data })

/** A turn of one step that streamed `chunks` deltas, as the loop logs it. */
function turn(chunks: number): WireEvent[] {
  return [
    at('turn/start', { turnId: `t${seq}` }),
    at('step/start'),
    at('user/message', { content: [{ type: 'text', text: 'hi' }], source: 'user' }),
    at('request/header', { system: 'a long system prompt', tools: [] }),
    ...Array.from({ length: chunks }, () => at('assistant/chunk', { kind: 'text', text: 'x' })),
    at('assistant/message', { content: [{ type: 'text', text: 'x'.repeat(chunks) }] }),
    at('step/end'),
    at('turn/end', { reason: 'completed' }),
  ]
}

test('the chunks of a finished step are left out and the request header keeps its place without its data', () => {
  seq = 0
  const events = turn(50)
  const page = pageOf(events, events.length, 100)
  expect(page.events.map((event) => event.type)).toEqual([
    'turn/start',
    'step/start',
    'user/message',
    'request/header',
    'assistant/message',
    'step/end',
    'turn/end',
  ])
  expect(page.events.find((event) => event.type === 'request/header')!.data).toEqual({ omitted: true })
  expect(page).toMatchObject({ start: 0, end: events.length })
})

test('the chunks of a step still streaming are kept', () => {
  seq = 0
  const events = [
    ...turn(2),
    at('turn/start', { turnId: 'live' }),
    at('step/start'),
    at('assistant/chunk', { kind: 'reasoning', text: 'hm' }),
    at('assistant/chunk', { kind: 'text', text: 'so' }),
  ]
  const page = pageOf(events, events.length, 100)
  expect(page.events.slice(-2).map((event) => event.data.text)).toEqual(['hm', 'so'])
})

test('pages walk back from `before` and start at a turn boundary', () => {
  seq = 0
  const events = Array.from({ length: 30 }, () => turn(3)).flat()
  const first = pageOf(events, events.length, 10)
  expect(events[first.start]!.type).toBe('turn/start')
  expect(first.end).toBe(events.length)
  const second = pageOf(events, first.start, 10)
  expect(second.end).toBe(first.start)
  expect(events[second.start]!.type).toBe('turn/start')
  expect(second.events.at(-1)!.seq).toBe(first.start - 1)
})
