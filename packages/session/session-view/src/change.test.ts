import { expect, test } from 'vitest'
import { pathOf, proposedChange } from './change.ts'

test('a replacement is read in each spelling tools use, with replace-all', () => {
  expect(proposedChange({ file_path: 'a.ts', old_string: 'x', new_string: 'y', replace_all: true })).toEqual({
    kind: 'replace',
    path: 'a.ts',
    edits: [{ oldText: 'x', newText: 'y' }],
    replaceAll: true,
  })
  expect(proposedChange({ path: 'a.ts', oldText: 'x', newText: 'y' })).toMatchObject({
    kind: 'replace',
    edits: [{ oldText: 'x', newText: 'y' }],
    replaceAll: false,
  })
  expect(proposedChange({ command: 'str_replace', path: 'a.ts', old_str: 'gone' })).toMatchObject({
    kind: 'replace',
    edits: [{ oldText: 'gone', newText: '' }],
  })
})

test('several edits, a write, a create and an insert', () => {
  expect(
    proposedChange({
      path: 'a.ts',
      edits: [
        { old: '1', new: '2' },
        { old_string: '3', new_string: '4' },
      ],
    }),
  ).toEqual({
    kind: 'replace',
    path: 'a.ts',
    edits: [
      { oldText: '1', newText: '2' },
      { oldText: '3', newText: '4' },
    ],
    replaceAll: false,
  })
  expect(proposedChange({ path: 'a.ts', content: 'all' })).toEqual({ kind: 'write', path: 'a.ts', content: 'all' })
  expect(proposedChange({ command: 'create', path: 'b.ts', file_text: 'new' })).toEqual({
    kind: 'write',
    path: 'b.ts',
    content: 'new',
  })
  expect(proposedChange({ command: 'insert', path: 'a.ts', insert_line: 3, new_str: 'line' })).toEqual({
    kind: 'insert',
    path: 'a.ts',
    text: 'line',
    line: 3,
  })
})

test('arguments that name no file, or describe no change, propose nothing', () => {
  expect(proposedChange({ content: 'no path' })).toBeUndefined()
  expect(proposedChange({ path: '', content: 'empty path' })).toBeUndefined()
  expect(proposedChange({ path: 'a.ts' })).toBeUndefined()
  expect(proposedChange({ path: 'a.ts', edits: [{ old: '1', new: '2' }, { nothing: true }] })).toBeUndefined()
  expect(proposedChange({ path: 'a.ts', edits: [] })).toBeUndefined()
  expect(proposedChange(['path', 'a.ts'])).toBeUndefined()
  expect(proposedChange(null)).toBeUndefined()
  expect(pathOf({ file: 'c.ts', path: 42 })).toBe('c.ts')
})
