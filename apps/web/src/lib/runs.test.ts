import { expect, test } from 'vitest'
import type { WireEvent } from '@dsh/web-protocol'
import { fold, type ToolItem } from './fold.ts'
import { groupRuns, runState, runSummary, type Row } from './runs.ts'

let seq = 0
const at = (type: string, data: unknown): WireEvent => ({ type, seq: seq++, time: seq * 10, data })
const call = (id: string, name = 'bash') => at('tool/call', { callId: id, name, arguments: { command: `echo ${id}` } })
const ok = (id: string) => at('tool/result', { callId: id, content: [{ type: 'text', text: id }] })
const ran = (id: string, name = 'bash') => [call(id, name), at('tool/dispatched', { callId: id }), ok(id)]
const answer = (text: string, reasoning = '') =>
  at('assistant/message', {
    content: [
      ...(reasoning ? [{ type: 'reasoning', text: reasoning }] : []),
      ...(text ? [{ type: 'text', text }] : []),
    ],
  })
const rowsOf = (...events: WireEvent[][]) => groupRuns(fold(events.flat()).items)
/** Rows as short words: a run is `run:<its call ids>|pinned:<ids>`, an item its kind. */
const shape = (rows: Row[]) =>
  rows.map((row) =>
    row.kind === 'item'
      ? row.item.kind
      : `run:${row.calls.map((c) => c.callId).join(',')}|pinned:${row.pinned.map((p) => (p as ToolItem).callId).join(',')}`,
  )

test('three or more consecutive calls are one run; two stay cards; text between calls ends a run', () => {
  const rows = rowsOf(
    [at('turn/start', { turnId: 't' })],
    ran('a'),
    ran('b'),
    [answer('Now the next part.')],
    ran('c'),
    ran('d'),
    ran('e'),
    [answer('Done.')],
  )
  expect(shape(rows)).toEqual(['tool', 'tool', 'assistant', 'run:c,d,e|pinned:', 'assistant'])
})

test("a thinking model's reasoning-only answers between calls do not break the run, and one after it is not in it", () => {
  const rows = rowsOf(ran('a'), [answer('', 'think')], ran('b'), [answer('', 'think')], ran('c'), [answer('', 'more')])
  expect(shape(rows)).toEqual(['run:a,b,c|pinned:', 'assistant'])
  expect((rows[0] as Extract<Row, { kind: 'run' }>).items.map((item) => item.kind)).toEqual([
    'tool',
    'assistant',
    'tool',
    'assistant',
    'tool',
  ])
})

test('a running call, one waiting for approval and a failed one are pinned: shown while the run is folded', () => {
  const rows = rowsOf(
    ran('a'),
    [call('f'), at('tool/result', { callId: 'f', content: [{ type: 'text', text: 'no\n[Exit code 1]' }] })],
    ran('b'),
    [call('w'), at('approval/asked', { requestId: 'q', tool: 'bash', summary: 'echo w', reason: 'r', callId: 'w' })],
    [call('r'), at('tool/dispatched', { callId: 'r' })],
  )
  expect(shape(rows)).toEqual(['run:a,f,b,w,r|pinned:f,w,r'])
  expect(runState((rows[0] as Extract<Row, { kind: 'run' }>).calls)).toEqual({
    running: 1,
    queued: 0,
    waiting: 1,
    failed: 1,
  })
  expect(runSummary((rows[0] as Extract<Row, { kind: 'run' }>).calls)).toBe('Running 5 commands')
})

test('a run keeps its key while it grows, so it keeps its row and whether it is open', () => {
  const events = [ran('a'), ran('b'), ran('c')].flat()
  const before = groupRuns(fold(events).items)
  const after = groupRuns(fold([...events, ...ran('d')]).items)
  expect([before[0]!.kind === 'run' && before[0]!.key, after.length]).toEqual([
    after[0]!.kind === 'run' && after[0]!.key,
    1,
  ])
})

test('a run says what it ran: commands alone by count, a mix by tool kind', () => {
  const calls = (names: string[]) =>
    (fold(names.flatMap((name, i) => ran(`${name}${i}`, name))).items as ToolItem[]).filter(
      (item) => item.kind === 'tool',
    )
  expect(runSummary(calls(Array(37).fill('bash')))).toBe('Ran 37 commands')
  expect(runSummary(calls(['bash', 'bash', 'edit', 'write', 'bash']))).toBe('Ran 5 tools (3 commands, 2 edits)')
  expect(runSummary(calls(['read', 'grep', 'glob', 'todo_write']))).toBe(
    'Ran 4 tools (1 read, 2 searches, 1 other call)',
  )
})
