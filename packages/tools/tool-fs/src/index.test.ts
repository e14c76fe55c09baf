import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'

async function boot(script: ScriptedResponse[], options: { patch?: string; files?: Record<string, string> } = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, options.patch), workspaceFiles: options.files })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

test('a write outside the workspace is refused and the file is absent', async () => {
  const outside = outsideDir()
  const h = await boot([call('w', 'write', { path: join(outside, 'pwned.txt'), content: 'x' })])
  await h.run('write outside')
  expect(h.toolResult('w').error).toMatchObject({ code: 'FS_SANDBOX_DENIED', message: expect.stringContaining(`Refused to write "${join(outside, 'pwned.txt')}"`) })
  expect(existsSync(join(outside, 'pwned.txt'))).toBe(false)
})

test('an edit of a file outside the workspace is refused and the file is unchanged', async () => {
  const outside = outsideDir()
  writeFileSync(join(outside, 'notes.txt'), 'keep me\n')
  const h = await boot([call('r', 'read', { path: join(outside, 'notes.txt') }), call('e', 'edit', { path: join(outside, 'notes.txt'), old_string: 'keep', new_string: 'lose' })])
  await h.run('edit outside')
  expect(h.toolText('r')).toBe('     1\tkeep me')
  expect(h.toolResult('e').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(readFileSync(join(outside, 'notes.txt'), 'utf8')).toBe('keep me\n')
})

test('writes through symlinks that leave the workspace are refused and nothing is created outside', async () => {
  const outside = outsideDir()
  writeFileSync(join(outside, 'target.txt'), 'original\n')
  const h = await boot([
    call('dir', 'write', { path: 'escape/pwned.txt', content: 'x' }),
    call('r', 'read', { path: 'alias.txt' }),
    call('file', 'edit', { path: 'alias.txt', old_string: 'original', new_string: 'changed' }),
  ])
  symlinkSync(outside, join(h.workspace, 'escape'))
  symlinkSync(join(outside, 'target.txt'), join(h.workspace, 'alias.txt'))
  await h.run('go through the links')
  expect(h.toolResult('dir').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(h.toolResult('file').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(existsSync(join(outside, 'pwned.txt'))).toBe(false)
  expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('original\n')
})

test('read returns numbered lines of the asked range and says where to continue', async () => {
  const text = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n'
  const h = await boot([call('r', 'read', { path: 'ten.txt', offset: 4, limit: 3 }), call('end', 'read', { path: 'ten.txt', offset: 9 })], { files: { 'ten.txt': text } })
  await h.run('read')
  expect(h.toolText('r')).toBe('     4\tline 4\n     5\tline 5\n     6\tline 6\n[Showing lines 4–6 of 10. Continue with offset=7.]')
  expect(h.toolText('end')).toBe('     9\tline 9\n    10\tline 10')
})

test('read stops at the byte cap on a line end and cuts over-long lines, saying so', async () => {
  const text = Array.from({ length: 50 }, (_, i) => `row ${String(i + 1).padStart(2, '0')} ${'x'.repeat(13)}`).join('\n') + '\n' + 'y'.repeat(90) + '\n'
  const h = await boot([call('cap', 'read', { path: 'big.txt' }), call('long', 'read', { path: 'big.txt', offset: 51 })], {
    files: { 'big.txt': text },
    patch: '- id: tool-fs\n  config: { readMaxBytes: 100, maxLineChars: 40 }\n',
  })
  await h.run('read')
  expect(h.toolText('cap')).toBe(
    `     1\trow 01 ${'x'.repeat(13)}\n     2\trow 02 ${'x'.repeat(13)}\n     3\trow 03 ${'x'.repeat(13)}\n     4\trow 04 ${'x'.repeat(13)}\n[Stopped after line 4 of 51: one read returns at most 100 bytes. Continue with offset=5.]`,
  )
  expect(h.toolText('long')).toBe(`    51\t${'y'.repeat(40)} … [line cut: 50 more characters]`)
})

test('read describes a binary file instead of showing it', async () => {
  const h = await boot([call('r', 'read', { path: 'blob.bin' })])
  writeFileSync(join(h.workspace, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]))
  await h.run('read')
  expect(h.toolResult('r')).toEqual({ callId: 'r', content: [{ type: 'text', text: '"blob.bin" is a binary file (8 bytes); its contents are not shown.' }] })
})

test('write creates a file with its folders, and replaces one it has read', async () => {
  const h = await boot([call('new', 'write', { path: 'a/b/new.txt', content: 'one\ntwo\n' }), call('r', 'read', { path: 'old.txt' }), call('old', 'write', { path: 'old.txt', content: 'fresh' })], {
    files: { 'old.txt': 'stale' },
  })
  await h.run('write')
  expect(h.toolText('new')).toBe('Created a/b/new.txt (8 bytes, 2 lines).')
  expect(h.toolText('old')).toBe('Replaced old.txt (5 bytes, 1 line).')
  expect(readFileSync(join(h.workspace, 'a/b/new.txt'), 'utf8')).toBe('one\ntwo\n')
  expect(readFileSync(join(h.workspace, 'old.txt'), 'utf8')).toBe('fresh')
})

test('edit replaces a unique string and shows the changed lines', async () => {
  const h = await boot([call('r', 'read', { path: 'app.js' }), call('e', 'edit', { path: 'app.js', old_string: 'let b = 2', new_string: 'let b = 20\nlet c = 3' })], {
    files: { 'app.js': 'let a = 1\nlet b = 2\nexport { a, b }\n' },
  })
  await h.run('edit')
  expect(readFileSync(join(h.workspace, 'app.js'), 'utf8')).toBe('let a = 1\nlet b = 20\nlet c = 3\nexport { a, b }\n')
  expect(h.toolText('e')).toBe('Edited app.js: replaced 1 occurrence.\n     1\tlet a = 1\n     2\tlet b = 20\n     3\tlet c = 3\n     4\texport { a, b }')
})

test('edit refuses an ambiguous old_string naming its lines, and replace_all replaces every one', async () => {
  const h = await boot(
    [
      call('r', 'read', { path: 'dup.txt' }),
      call('ambiguous', 'edit', { path: 'dup.txt', old_string: 'foo', new_string: 'bar' }),
      call('all', 'edit', { path: 'dup.txt', old_string: 'foo', new_string: 'bar', replace_all: true }),
    ],
    { files: { 'dup.txt': 'foo\nmiddle\nfoo foo\n' } },
  )
  await h.run('edit')
  expect(h.toolResult('ambiguous').error).toEqual({
    code: 'EDIT_NOT_UNIQUE',
    message: 'old_string occurs 3 times in dup.txt (lines 1, 3, 3). Include more surrounding lines to make it unique, or set replace_all: true to replace them all.',
  })
  expect(h.toolText('all')).toMatch(/^Edited dup.txt: replaced 3 occurrences\./)
  expect(readFileSync(join(h.workspace, 'dup.txt'), 'utf8')).toBe('bar\nmiddle\nbar bar\n')
})

test('edit says when old_string is not in the file, with the CRLF hint when that is why', async () => {
  const h = await boot(
    [
      call('r', 'read', { path: 'win.txt' }),
      call('missing', 'edit', { path: 'win.txt', old_string: 'absent', new_string: 'x' }),
      call('crlf', 'edit', { path: 'win.txt', old_string: 'one\ntwo', new_string: 'x' }),
    ],
    { files: { 'win.txt': 'one\r\ntwo\r\n' } },
  )
  await h.run('edit')
  expect(h.toolResult('missing').error).toEqual({
    code: 'EDIT_NOT_FOUND',
    message: 'old_string was not found in win.txt. It must match the file exactly, whitespace and indentation included: read the file again and copy the text.',
  })
  expect(h.toolResult('crlf').error?.message).toMatch(/CRLF line ends/)
  expect(readFileSync(join(h.workspace, 'win.txt'), 'utf8')).toBe('one\r\ntwo\r\n')
})

test('the snippet after a long edit is cut with a note of the lines left out', async () => {
  const many = Array.from({ length: 30 }, (_, i) => `new ${i + 1}`).join('\n')
  const h = await boot([call('r', 'read', { path: 'f.txt' }), call('e', 'edit', { path: 'f.txt', old_string: 'old', new_string: many })], {
    files: { 'f.txt': 'top\nold\nbottom\n' },
    patch: '- id: tool-fs\n  config: { maxSnippetLines: 5, editContextLines: 1 }\n',
  })
  await h.run('edit')
  expect(h.toolText('e')).toBe('Edited f.txt: replaced 1 occurrence.\n     1\ttop\n     2\tnew 1\n     3\tnew 2\n     4\tnew 3\n     5\tnew 4\n[… lines 6–32 of the change not shown]')
})
