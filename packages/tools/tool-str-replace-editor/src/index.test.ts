import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'

async function boot(script: ScriptedResponse[], files: Record<string, string> = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), workspaceFiles: files })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

const editor = (id: string, args: Record<string, unknown>) => toolCall(id, 'str_replace_editor', args)
const FIVE = 'a\nb\nc\nd\ne\n'

test('view shows a range of numbered lines, and a directory two levels deep without hidden entries', async () => {
  const h = await boot(
    [
      editor('range', { command: 'view', path: 'five.txt', view_range: [2, 3] }),
      editor('dir', { command: 'view', path: '.' }),
    ],
    {
      'five.txt': FIVE,
      'src/lib/deep.ts': '',
      'src/main.ts': '',
      '.env': '',
    },
  )
  await h.run('look')
  expect(h.toolText('range')).toBe(
    'Lines of five.txt:\n     2\tb\n     3\tc\n[Showing lines 2–3 of 5. View more with view_range [4, -1].]',
  )
  expect(h.toolText('dir')).toBe(
    `Files and directories in ${h.workspace} (two levels, hidden ones left out):\nfive.txt\nsrc/\nsrc/lib/\nsrc/main.ts`,
  )
})

test('create writes a new file with its folders and never overwrites one', async () => {
  const h = await boot([
    editor('new', { command: 'create', path: 'pkg/new.txt', file_text: 'hello\n' }),
    editor('again', { command: 'create', path: 'pkg/new.txt', file_text: 'other\n' }),
  ])
  await h.run('create')
  expect(h.toolText('new')).toBe('Created pkg/new.txt (6 bytes, 1 line).')
  expect(h.toolResult('again').error?.code).toBe('EDITOR_FILE_EXISTS')
  expect(readFileSync(join(h.workspace, 'pkg/new.txt'), 'utf8')).toBe('hello\n')
})

test('str_replace replaces a unique string and refuses a missing or repeated one', async () => {
  const h = await boot(
    [
      editor('view', { command: 'view', path: 'f.txt' }),
      editor('ok', { command: 'str_replace', path: 'f.txt', old_str: 'c\n', new_str: 'C\n' }),
      editor('missing', { command: 'str_replace', path: 'f.txt', old_str: 'zzz', new_str: 'y' }),
      editor('twice', { command: 'str_replace', path: 'f.txt', old_str: 'x', new_str: 'y' }),
    ],
    { 'f.txt': 'a\nb\nc\nx\nx\n' },
  )
  await h.run('replace')
  expect(h.toolText('ok')).toBe('Edited f.txt:\n     1\ta\n     2\tb\n     3\tC\n     4\tx\n     5\tx')
  expect(h.toolResult('missing').error).toEqual({
    code: 'EDITOR_NOT_FOUND',
    message:
      'old_str was not found in f.txt: it must match exactly, whitespace and indentation included. View the file and copy the text.',
  })
  expect(h.toolResult('twice').error).toEqual({
    code: 'EDITOR_NOT_UNIQUE',
    message: 'old_str occurs 2 times in f.txt (lines 4, 5): include more surrounding lines to make it unique.',
  })
  expect(readFileSync(join(h.workspace, 'f.txt'), 'utf8')).toBe('a\nb\nC\nx\nx\n')
})

test('insert puts lines at the top, in the middle and after a last line that had no line end', async () => {
  const h = await boot(
    [
      editor('view', { command: 'view', path: 'f.txt' }),
      editor('top', { command: 'insert', path: 'f.txt', insert_line: 0, new_str: 'first' }),
      editor('middle', { command: 'insert', path: 'f.txt', insert_line: 2, new_str: 'between\n' }),
      editor('end', { command: 'insert', path: 'f.txt', insert_line: 5, new_str: 'last' }),
      editor('past', { command: 'insert', path: 'f.txt', insert_line: 9, new_str: 'nowhere' }),
    ],
    { 'f.txt': 'one\ntwo\nthree' },
  )
  await h.run('insert')
  expect(readFileSync(join(h.workspace, 'f.txt'), 'utf8')).toBe('first\none\nbetween\ntwo\nthree\nlast\n')
  expect(h.toolText('middle')).toMatch(/^Inserted 1 line after line 2 of f.txt:\n/)
  expect(h.toolResult('past').error?.message).toBe(
    'insert_line must be between 0 (the top) and 6 (after the last line) in f.txt; got 9',
  )
})

test('create outside the workspace is refused and the file is absent', async () => {
  const outside = outsideDir()
  const h = await boot([editor('out', { command: 'create', path: join(outside, 'x.txt'), file_text: 'x' })])
  await h.run('create outside')
  expect(h.toolResult('out').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(existsSync(join(outside, 'x.txt'))).toBe(false)
})

test('undo_edit puts back the text before each str_replace and insert, newest first, then says nothing is left', async () => {
  const h = await boot(
    [
      editor('view', { command: 'view', path: 'f.txt' }),
      editor('replace', { command: 'str_replace', path: 'f.txt', old_str: 'two', new_str: 'TWO' }),
      editor('insert', { command: 'insert', path: 'f.txt', insert_line: 3, new_str: 'four' }),
      editor('undo-insert', { command: 'undo_edit', path: 'f.txt' }),
      editor('undo-replace', { command: 'undo_edit', path: 'f.txt' }),
      editor('nothing', { command: 'undo_edit', path: 'f.txt' }),
    ],
    { 'f.txt': 'one\ntwo\nthree\n' },
  )
  await h.run('edit and undo')
  expect(h.toolText('undo-insert')).toBe(
    'Undid the last edit of f.txt (1 more can be undone):\n     1\tone\n     2\tTWO\n     3\tthree',
  )
  expect(h.toolResult('undo-replace').error).toBeUndefined()
  expect(readFileSync(join(h.workspace, 'f.txt'), 'utf8')).toBe('one\ntwo\nthree\n')
  expect(h.toolResult('nothing').error).toEqual({
    code: 'EDITOR_NOTHING_TO_UNDO',
    message: 'No str_replace or insert of f.txt in this session is left to undo.',
  })
})

test('undo_edit refuses to overwrite a change made since the last edit, and the file keeps it', async () => {
  const h = await boot(
    [
      editor('view', { command: 'view', path: 'f.txt' }),
      editor('replace', { command: 'str_replace', path: 'f.txt', old_str: 'a', new_str: 'b' }),
      toolCall('touch', 'bash', { command: 'echo changed > f.txt' }),
      editor('view-again', { command: 'view', path: 'f.txt' }),
      editor('undo', { command: 'undo_edit', path: 'f.txt' }),
    ],
    { 'f.txt': 'a\n' },
  )
  await h.run('edit, change, undo')
  expect(h.toolResult('undo').error?.code).toBe('FS_CHANGED')
  expect(readFileSync(join(h.workspace, 'f.txt'), 'utf8')).toBe('changed\n')
})

test('an unknown command is refused with the list of valid commands', async () => {
  const h = await boot([editor('bad', { command: 'delete', path: 'f.txt' })], { 'f.txt': 'x\n' })
  await h.run('delete')
  expect(h.toolResult('bad').error).toMatchObject({
    code: 'INVALID_ARGS',
    message: expect.stringContaining('"view", "create", "str_replace", "insert", "undo_edit"'),
  })
  expect(readFileSync(join(h.workspace, 'f.txt'), 'utf8')).toBe('x\n')
})

test('str_replace of a text the file has only with other indentation shows where it is', async () => {
  const h = await boot(
    [
      editor('view', { command: 'view', path: 'f.py' }),
      editor('indent', { command: 'str_replace', path: 'f.py', old_str: 'if x:\n  return 1', new_str: 'pass' }),
    ],
    {
      'f.py': 'def f(x):\n    if x:\n        return 1\n',
    },
  )
  await h.run('replace')
  expect(h.toolResult('indent').error?.message).toBe(
    'old_str was not found in f.py: it must match exactly, whitespace and indentation included. View the file and copy the text. The closest text, at lines 2–3, differs only in whitespace or indentation:\n     2\t    if x:\n     3\t        return 1',
  )
})
