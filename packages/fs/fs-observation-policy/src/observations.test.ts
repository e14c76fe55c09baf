import { expect, test } from 'vitest'
import { checkShape, type SessionEvent } from '@dsh/session'
import { FsObservedData, ObservationFold } from './observations.ts'

const version = { mtimeMs: 1000, size: 10 }
const log = (...events: [string, unknown][]) =>
  events.map(([type, data], seq) => ({ type, seq, time: 5000 + seq, data }) as SessionEvent)

test('an observation does not count before its result, nor when its result is an error (a call cut by a crash)', () => {
  const fold = new ObservationFold().update(
    log(
      ['tool/call', { callId: 'pending', name: 'read', arguments: {} }],
      ['fs/observed', { callId: 'pending', path: '/w/a', version }],
      ['tool/call', { callId: 'cut', name: 'read', arguments: {} }],
      ['fs/observed', { callId: 'cut', path: '/w/b', version }],
      [
        'tool/result',
        { callId: 'cut', content: [], error: { code: 'TOOL_OUTCOME_UNKNOWN', message: 'lost in a crash' } },
      ],
    ),
  )
  expect(fold.last('/w/a')).toBeUndefined()
  expect(fold.last('/w/b')).toBeUndefined()
})

test('the latest successful observation of a file wins, folded incrementally', () => {
  const events = log(
    ['tool/call', { callId: 'r1', name: 'read', arguments: {} }],
    ['fs/observed', { callId: 'r1', path: '/w/a', version }],
    ['tool/result', { callId: 'r1', content: [] }],
    ['tool/call', { callId: 'e1', name: 'edit', arguments: {} }],
    ['fs/observed', { callId: 'e1', path: '/w/a', version: { mtimeMs: 2000, size: 12 } }],
    ['tool/result', { callId: 'e1', content: [] }],
  )
  const fold = new ObservationFold()
  expect(fold.update(events.slice(0, 5)).last('/w/a')).toEqual({
    callId: 'r1',
    tool: 'read',
    path: '/w/a',
    version,
    seq: 2,
    time: 5002,
  })
  expect(fold.update(events).last('/w/a')).toEqual({
    callId: 'e1',
    tool: 'edit',
    path: '/w/a',
    version: { mtimeMs: 2000, size: 12 },
    seq: 5,
    time: 5005,
  })
})

test('fs/observed is declared by its schema: a version without its size fails the check, naming the field', () => {
  expect(checkShape(FsObservedData, { callId: 'r1', path: '/w/a', version }, 'data')).toBeUndefined()
  expect(checkShape(FsObservedData, { callId: 'r1', path: '/w/a', version: { mtimeMs: 1 } }, 'data')).toBe(
    'data.version.size must be a number',
  )
})
