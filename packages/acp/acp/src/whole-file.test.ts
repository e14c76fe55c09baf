// The whole-file diff of an applied edit from its card's checkpoints, and the fragment (with why) when a
// side cannot be shown whole.
import { expect, test } from 'vitest'
import type { FileTouch, ToolItem } from '@dsh/session-view'
import { wholeFileDiff } from './whole-file.ts'

const OLD = 'a'.repeat(64)
const NEW = 'b'.repeat(64)
const stored: Record<string, string> = { [OLD]: 'one\ntwo\n', [NEW]: 'one\nTWO\n' }
const source = { maxBytes: 100, text: (sha256: string) => stored[sha256] }
const fragment = { type: 'diff' as const, path: '/w/a.txt', oldText: 'two', newText: 'TWO' }
const card = (...files: FileTouch[]) => ({ kind: 'tool', callId: 'c', files }) as unknown as ToolItem

test('both sides recorded and small: the whole file before and after', () => {
  const item = card({ path: 'a.txt', before: { sha256: OLD, bytes: 8 }, after: { sha256: NEW, bytes: 8 } })
  expect(wholeFileDiff(item, '/w/a.txt', fragment, source)).toEqual({
    diff: { type: 'diff', path: '/w/a.txt', oldText: 'one\ntwo\n', newText: 'one\nTWO\n' },
  })
})

test('a file that did not exist before has no old side', () => {
  const item = card({ path: 'a.txt', before: { absent: true }, after: { sha256: NEW, bytes: 8 } })
  expect(wholeFileDiff(item, '/w/a.txt', fragment, source).diff).toEqual({
    type: 'diff',
    path: '/w/a.txt',
    oldText: null,
    newText: 'one\nTWO\n',
  })
})

test.each([
  [
    { before: { sha256: OLD, bytes: 101 }, after: { sha256: NEW, bytes: 8 } },
    'before the call it is 101 bytes, more than diffMaxBytes (100)',
  ],
  [
    { before: { unrecorded: 'too-large' }, after: { sha256: NEW, bytes: 8 } },
    'before the call it was too large to record',
  ],
  [{ before: { sha256: OLD, bytes: 8 }, after: { unrecorded: 'unreadable' } }, 'after the call it could not be read'],
  [
    { before: { sha256: NEW.replace('b', 'c'), bytes: 8 }, after: { sha256: NEW, bytes: 8 } },
    'before the call its recorded content is not text or no longer stored',
  ],
  [{ after: { sha256: NEW, bytes: 8 } }, 'before the call its content was not recorded'],
  [{ before: { sha256: OLD, bytes: 8 }, after: { absent: true } }, 'the file is gone after the call'],
] as [Omit<FileTouch, 'path'>, string][])(
  'a side that cannot be shown whole falls back to the fragment and says why: %j',
  (sides, why) => {
    expect(wholeFileDiff(card({ path: 'a.txt', ...sides }), '/w/a.txt', fragment, source)).toEqual({
      diff: fragment,
      note: `Not the whole file: ${why}; the change is shown from the call's arguments.`,
    })
  },
)

test('without checkpoints (no store, no touch, several files) the fragment is shown as it is', () => {
  const touch = { path: 'a.txt', before: { sha256: OLD, bytes: 8 }, after: { sha256: NEW, bytes: 8 } }
  expect(wholeFileDiff(card(touch), '/w/a.txt', fragment, undefined)).toEqual({ diff: fragment })
  expect(wholeFileDiff(card(), '/w/a.txt', fragment, source)).toEqual({ diff: fragment })
  expect(wholeFileDiff(card(touch, { ...touch, path: 'b.txt' }), '/w/a.txt', fragment, source)).toEqual({
    diff: fragment,
  })
})

test('an insert, which proposes no diff, is shown whole once applied; unrecorded, it shows none and says why', () => {
  const touch = { path: 'a.txt', before: { sha256: OLD, bytes: 8 }, after: { sha256: NEW, bytes: 8 } }
  expect(wholeFileDiff(card(touch), '/w/a.txt', undefined, source)).toEqual({
    diff: { type: 'diff', path: '/w/a.txt', oldText: 'one\ntwo\n', newText: 'one\nTWO\n' },
  })
  expect(wholeFileDiff(card({ ...touch, after: { unrecorded: 'secret' } }), '/w/a.txt', undefined, source)).toEqual({
    note: 'Not the whole file: after the call it is a secret path (never read); no diff is shown.',
  })
  expect(wholeFileDiff(card(), '/w/a.txt', undefined, source)).toEqual({})
})
