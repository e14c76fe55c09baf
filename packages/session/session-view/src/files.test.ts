// A tool card keeps what its files held before and after the call (the checkpoint kinds), so a surface can
// show the whole file's change from the log alone.
import { expect, test } from 'vitest'
import type { LogEvent, ToolItem } from './items.ts'
import { SessionView } from './view.ts'

const log = (...entries: [string, unknown][]): LogEvent[] =>
  entries.map(([type, data], seq) => ({ type, seq, time: 1000 + seq, data }))
const tool = (view: SessionView, callId: string) =>
  view.items.find((item): item is ToolItem => item.kind === 'tool' && item.callId === callId)!
const A = 'a'.repeat(64)
const B = 'b'.repeat(64)
const C = 'c'.repeat(64)
const edit = (callId: string) =>
  ['tool/call', { callId, name: 'edit', arguments: { path: 'x.txt', old_string: 'o', new_string: 'n' } }] as [
    string,
    unknown,
  ]

test("a call's card holds its file before and after; a later call in the turn starts from what the first left", () => {
  const view = SessionView.fold(
    log(
      ['turn/start', { turnId: 't' }],
      edit('one'),
      ['checkpoint/before', { callId: 'one', turn: 1, path: 'x.txt', state: { sha256: A, bytes: 3 }, via: 'tool' }],
      ['checkpoint/after', { callId: 'one', path: 'x.txt', state: { sha256: B, bytes: 4 } }],
      ['tool/result', { callId: 'one', content: [{ type: 'text', text: 'ok' }] }],
      edit('two'),
      ['checkpoint/after', { callId: 'two', path: 'x.txt', state: { sha256: C, bytes: 5 } }],
      ['tool/call', { callId: 'new', name: 'write', arguments: { path: 'y.txt', content: 'y' } }],
      ['checkpoint/before', { callId: 'new', turn: 1, path: 'y.txt', state: { absent: true }, via: 'tool' }],
      ['checkpoint/after', { callId: 'new', path: 'y.txt', state: { unrecorded: 'too-large' } }],
    ),
  )
  expect(tool(view, 'one').files).toEqual([
    { path: 'x.txt', before: { sha256: A, bytes: 3 }, after: { sha256: B, bytes: 4 } },
  ])
  expect(tool(view, 'two').files).toEqual([
    { path: 'x.txt', before: { sha256: B, bytes: 4 }, after: { sha256: C, bytes: 5 } },
  ])
  expect(tool(view, 'new').files).toEqual([
    { path: 'y.txt', before: { absent: true }, after: { unrecorded: 'too-large' } },
  ])
  expect(view.skipped.has('checkpoint/before')).toBe(false)
})

test('a checkpoint of a malformed shape, or of a call not shown, changes no card', () => {
  const view = new SessionView()
  for (const event of log(edit('one'))) view.apply(event)
  const [bad, elsewhere] = log(
    ['checkpoint/after', { callId: 'one', path: 'x.txt', state: { sha256: 7 } }],
    ['checkpoint/after', { callId: 'gone', path: 'x.txt', state: { absent: true } }],
  )
  expect(view.apply(bad!)).toEqual([])
  expect(view.apply(elsewhere!)).toEqual([])
  expect(tool(view, 'one').files).toBeUndefined()
})
