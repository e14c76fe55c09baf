// Cards say what happened: a refused change is not applied, a failed command is a failure, a cut call is
// interrupted as soon as the log is read.
import { expect, test } from 'vitest'
import type { LogEvent, ToolItem } from './items.ts'
import { SessionView } from './view.ts'

const log = (...entries: [string, unknown][]): LogEvent[] =>
  entries.map(([type, data], seq) => ({ type, seq, time: 1000 + seq, data }))
const tool = (view: SessionView, callId: string) =>
  view.items.find((item): item is ToolItem => item.kind === 'tool' && item.callId === callId)!
const text = (value: string) => [{ type: 'text', text: value }]
const edit = { path: 'a.ts', old_string: 'one', new_string: 'uno' }

test('an edit refused before it ran keeps its proposed change, marked refused; an applied one is applied', () => {
  const view = SessionView.fold(
    log(
      ['turn/start', { turnId: 't' }],
      ['tool/call', { callId: 'no', name: 'edit', arguments: edit }],
      ['tool/result', { callId: 'no', content: text('denied'), error: { code: 'DENIED', message: 'read it first' } }],
      ['tool/call', { callId: 'yes', name: 'edit', arguments: edit }],
      ['tool/dispatched', { callId: 'yes' }],
      ['tool/result', { callId: 'yes', content: text('ok') }],
      ['tool/call', { callId: 'waiting', name: 'write', arguments: { path: 'b', content: 'x' } }],
    ),
  )
  expect(tool(view, 'no')).toMatchObject({ status: 'error', changeState: 'refused', change: { kind: 'replace' } })
  expect(tool(view, 'yes')).toMatchObject({ status: 'done', changeState: 'applied' })
  expect(tool(view, 'waiting')).toMatchObject({ status: 'pending', changeState: 'proposed' })
})

test('a command that exited 1 is a failure, with how it ended, though its result carries no error', () => {
  const view = SessionView.fold(
    log(
      ['tool/call', { callId: 'b', name: 'bash', arguments: { command: 'false' } }],
      ['tool/result', { callId: 'b', content: text('oops\n\n[Exit code 1]') }],
      ['tool/call', { callId: 'ok', name: 'bash', arguments: { command: 'true' } }],
      ['tool/result', { callId: 'ok', content: text('fine') }],
      ['tool/call', { callId: 'r', name: 'read', arguments: { path: 'notes' } }],
      ['tool/result', { callId: 'r', content: text('a file whose last line reads\n[Exit code 1]') }],
    ),
  )
  expect(tool(view, 'b')).toMatchObject({ status: 'error', ending: 'exit 1' })
  expect(tool(view, 'ok')).toMatchObject({ status: 'done' })
  expect(tool(view, 'ok').ending).toBeUndefined()
  expect(tool(view, 'r')).toMatchObject({ status: 'done' }) // only command tools' notes count
})

test('a call the turn ended without, or that repair closed, is interrupted; settle interrupts what a crash left open', () => {
  const events = log(
    ['turn/start', { turnId: 't' }],
    ['tool/call', { callId: 'cut', name: 'bash', arguments: { command: 'sleep 100' } }],
    ['tool/dispatched', { callId: 'cut' }],
    [
      'tool/result',
      { callId: 'cut', content: text('unknown'), error: { code: 'TOOL_OUTCOME_UNKNOWN', message: 'dsh stopped' } },
    ],
    ['tool/call', { callId: 'never', name: 'edit', arguments: edit }],
    ['turn/end', { turnId: 't', reason: 'aborted' }],
    ['turn/start', { turnId: 't2' }],
    ['tool/call', { callId: 'crash', name: 'write', arguments: { path: 'x', content: 'y' } }],
    ['tool/dispatched', { callId: 'crash' }],
  )
  const view = SessionView.fold(events)
  expect(tool(view, 'cut')).toMatchObject({ status: 'interrupted' })
  expect(tool(view, 'never')).toMatchObject({ status: 'interrupted', changeState: 'refused' })
  expect(tool(view, 'crash').status).toBe('running')
  const before = tool(view, 'crash')
  const changes = view.settle()
  expect(tool(view, 'crash')).toMatchObject({ status: 'interrupted', changeState: 'unknown' })
  expect(tool(view, 'crash').version).not.toBe(before.version)
  expect(changes).toEqual([
    expect.objectContaining({ op: 'updated', cause: 'settle' }),
    { op: 'session', cause: 'settle' },
  ])
  expect(view.openTurn).toBe(false)
})

test('a rewind shows as a notice saying what it restored and what it left', () => {
  const view = SessionView.fold(
    log([
      'rewind/done',
      {
        toTurn: 2,
        forced: false,
        restored: [{ path: 'a', state: { absent: true } }],
        conflicts: [{ path: 'c', reason: 'changed' }],
        skipped: [],
        actor: 'user:web-tab',
      },
    ]),
  )
  expect(view.items).toEqual([
    expect.objectContaining({
      kind: 'notice',
      cause: 'rewind',
      tone: 'warn',
      text: 'Files rewound to their state before turn 2: 1 restored, 1 changed since by someone else and left as is.',
    }),
  ])
})

test('model switches with nothing between them are one route notice that updates', () => {
  const route = (model: string) => ['model/route', { route: { provider: 'deepseek', model } }] as [string, unknown]
  const view = SessionView.fold(
    log(route('a'), route('b'), route('c'), ['user/message', { content: text('hi'), source: 'user' }], route('d')),
  )
  expect(view.items.map((item) => (item.kind === 'notice' ? item.text : item.kind))).toEqual([
    'Model: deepseek/c',
    'user',
    'Model: deepseek/d',
  ])
  expect(view.route?.model).toBe('d')
})
