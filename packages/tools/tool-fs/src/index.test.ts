import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'

async function boot(
  script: ScriptedResponse[],
  options: { patch?: string; files?: Record<string, string> } = {},
): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, options.patch), workspaceFiles: options.files })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

test('a write outside the workspace is refused and the file is absent', async () => {
  const outside = outsideDir()
  const h = await boot([call('w', 'write', { path: join(outside, 'pwned.txt'), content: 'x' })])
  await h.run('write outside')
  expect(h.toolResult('w').error).toMatchObject({
    code: 'FS_SANDBOX_DENIED',
    message: expect.stringContaining(`Refused to write "${join(outside, 'pwned.txt')}"`),
  })
  expect(existsSync(join(outside, 'pwned.txt'))).toBe(false)
})

test('an edit of a file outside the workspace is refused and the file is unchanged', async () => {
  const outside = outsideDir()
  writeFileSync(join(outside, 'notes.txt'), 'keep me\n')
  const h = await boot([
    call('r', 'read', { path: join(outside, 'notes.txt') }),
    call('e', 'edit', { path: join(outside, 'notes.txt'), old_string: 'keep', new_string: 'lose' }),
  ])
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
  const h = await boot(
    [call('r', 'read', { path: 'ten.txt', offset: 4, limit: 3 }), call('end', 'read', { path: 'ten.txt', offset: 9 })],
    { files: { 'ten.txt': text } },
  )
  await h.run('read')
  expect(h.toolText('r')).toBe(
    '     4\tline 4\n     5\tline 5\n     6\tline 6\n[Showing lines 4–6 of 10. Continue with offset=7.]',
  )
  expect(h.toolText('end')).toBe('     9\tline 9\n    10\tline 10')
})

test('read stops at the byte cap on a line end and cuts over-long lines, saying so', async () => {
  const text =
    Array.from({ length: 50 }, (_, i) => `row ${String(i + 1).padStart(2, '0')} ${'x'.repeat(13)}`).join('\n') +
    '\n' +
    'y'.repeat(90) +
    '\n'
  const h = await boot(
    [call('cap', 'read', { path: 'big.txt' }), call('long', 'read', { path: 'big.txt', offset: 51 })],
    {
      files: { 'big.txt': text },
      patch: '- id: tool-fs\n  config: { readMaxBytes: 100, maxLineChars: 40 }\n',
    },
  )
  await h.run('read')
  expect(h.toolText('cap')).toBe(
    `     1\trow 01 ${'x'.repeat(13)}\n     2\trow 02 ${'x'.repeat(13)}\n     3\trow 03 ${'x'.repeat(13)}\n     4\trow 04 ${'x'.repeat(13)}\n[Stopped after line 4 of 51: one read returns at most 100 bytes. Continue with offset=5.]`,
  )
  expect(h.toolText('long')).toBe(`    51\t${'y'.repeat(40)} … [line cut: 50 more characters]`)
})

test('read describes a binary file instead of showing it', async () => {
  const h = await boot([call('r', 'read', { path: 'blob.bin' })])
  writeFileSync(join(h.workspace, 'blob.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]))
  await h.run('read')
  expect(h.toolResult('r')).toEqual({
    callId: 'r',
    content: [{ type: 'text', text: '"blob.bin" is a binary file (8 bytes); its contents are not shown.' }],
  })
})

const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
)

test('read of an image on a vision route sends the image itself, and the log keeps only its reference', async () => {
  const h = await bootComposition({
    patch: scriptedPatch({
      config: '{ models: [{ id: vision, contextWindow: 100000, images: true }] }',
      model: 'vision',
    }),
    workspaceFiles: {},
  })
  onTestFinished(() => h.dispose())
  writeFileSync(join(h.workspace, 'shot.png'), PIXEL)
  h.root.scriptedLlm.enqueue(call('r', 'read', { path: 'shot.png' }), { text: 'a pixel' })
  await h.run('look at the screenshot')
  const result = h.toolResult('r')
  expect(result.content[0]).toEqual({
    type: 'text',
    text: `"shot.png" is an image (image/png, ${PIXEL.length} bytes):`,
  })
  expect(result.content[1]).toMatchObject({
    type: 'image',
    mediaType: 'image/png',
    sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
  })
  expect(JSON.stringify(h.events())).not.toContain(PIXEL.toString('base64'))
  const sent = h.root.scriptedLlm.requests[1]!.messages.find((message) => message.role === 'tool')!
  expect(sent.content[0]!.content[1]).toEqual({ type: 'image', mediaType: 'image/png', data: PIXEL.toString('base64') })
})

test('read says a PDF is not extracted and how to convert it, and describes other binaries', async () => {
  const h = await boot([call('pdf', 'read', { path: 'paper.pdf' }), call('bin', 'read', { path: 'data.bin' })])
  writeFileSync(
    join(h.workspace, 'paper.pdf'),
    Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 0xff])]),
  )
  writeFileSync(join(h.workspace, 'data.bin'), Buffer.from([0, 1, 2, 3]))
  await h.run('read')
  expect(h.toolText('pdf')).toBe(
    '"paper.pdf" is a PDF (13 bytes): read does not extract PDF text. If a converter is installed, run it in the shell (e.g. pdftotext -layout "paper.pdf" -) and read its output.',
  )
  expect(h.toolText('bin')).toBe('"data.bin" is a binary file (4 bytes); its contents are not shown.')
})

test('write creates a file with its folders, and replaces one it has read', async () => {
  const h = await boot(
    [
      call('new', 'write', { path: 'a/b/new.txt', content: 'one\ntwo\n' }),
      call('r', 'read', { path: 'old.txt' }),
      call('old', 'write', { path: 'old.txt', content: 'fresh' }),
    ],
    {
      files: { 'old.txt': 'stale' },
    },
  )
  await h.run('write')
  expect(h.toolText('new')).toBe('Created a/b/new.txt (8 bytes, 2 lines).')
  expect(h.toolText('old')).toBe('Replaced old.txt (5 bytes, 1 line).')
  expect(readFileSync(join(h.workspace, 'a/b/new.txt'), 'utf8')).toBe('one\ntwo\n')
  expect(readFileSync(join(h.workspace, 'old.txt'), 'utf8')).toBe('fresh')
})

test('edit replaces a unique string and shows the changed lines', async () => {
  const h = await boot(
    [
      call('r', 'read', { path: 'app.js' }),
      call('e', 'edit', { path: 'app.js', old_string: 'let b = 2', new_string: 'let b = 20\nlet c = 3' }),
    ],
    {
      files: { 'app.js': 'let a = 1\nlet b = 2\nexport { a, b }\n' },
    },
  )
  await h.run('edit')
  expect(readFileSync(join(h.workspace, 'app.js'), 'utf8')).toBe('let a = 1\nlet b = 20\nlet c = 3\nexport { a, b }\n')
  expect(h.toolText('e')).toBe(
    'Edited app.js: replaced 1 occurrence.\n     1\tlet a = 1\n-    2\tlet b = 2\n+    2\tlet b = 20\n+    3\tlet c = 3\n     4\texport { a, b }',
  )
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
    message:
      'old_string occurs 3 times in dup.txt (lines 1, 3, 3). Include more surrounding lines to make it unique, or set replace_all: true to replace them all.',
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
    message:
      'old_string was not found in win.txt. It must match the file exactly, whitespace and indentation included: read the file again and copy the text.',
  })
  expect(h.toolResult('crlf').error?.message).toMatch(/CRLF line ends/)
  expect(readFileSync(join(h.workspace, 'win.txt'), 'utf8')).toBe('one\r\ntwo\r\n')
})

test('the snippet after a long edit is cut with a note of the lines left out', async () => {
  const many = Array.from({ length: 30 }, (_, i) => `new ${i + 1}`).join('\n')
  const h = await boot(
    [call('r', 'read', { path: 'f.txt' }), call('e', 'edit', { path: 'f.txt', old_string: 'old', new_string: many })],
    {
      files: { 'f.txt': 'top\nold\nbottom\n' },
      patch: '- id: tool-fs\n  config: { maxSnippetLines: 5, editContextLines: 1 }\n',
    },
  )
  await h.run('edit')
  expect(h.toolText('e')).toBe(
    'Edited f.txt: replaced 1 occurrence.\n     1\ttop\n-    2\told\n+    2\tnew 1\n+    3\tnew 2\n+    4\tnew 3\n[… 28 more lines of the diff not shown: read the file to see them]',
  )
})

test('the diff keeps lines old_string repeated unchanged as context, and a deletion of whole lines adds none', async () => {
  const h = await boot(
    [
      call('r', 'read', { path: 'f.txt' }),
      call('context', 'edit', { path: 'f.txt', old_string: 'one\ntwo\nthree\n', new_string: 'one\nTWO\nthree\n' }),
      call('delete', 'edit', { path: 'f.txt', old_string: 'four\n', new_string: '' }),
    ],
    {
      files: { 'f.txt': 'zero\none\ntwo\nthree\nfour\nfive\nsix\nseven\n' },
      patch: '- id: tool-fs\n  config: { editContextLines: 1 }\n',
    },
  )
  await h.run('edit')
  expect(h.toolText('context')).toBe(
    'Edited f.txt: replaced 1 occurrence.\n     2\tone\n-    3\ttwo\n+    3\tTWO\n     4\tthree',
  )
  expect(h.toolText('delete')).toBe('Edited f.txt: replaced 1 occurrence.\n     4\tthree\n-    5\tfour\n     5\tfive')
})

test('an old_string that is not in the file gets the closest text shown, saying when only whitespace differs', async () => {
  const source = 'function add(a, b) {\n  return a + b\n}\n\nfunction sub(a, b) {\n  return a - b\n}\n'
  const h = await boot(
    [
      call('r', 'read', { path: 'm.js' }),
      call('indent', 'edit', {
        path: 'm.js',
        old_string: 'function sub(a, b) {\n    return a - b\n}',
        new_string: 'x',
      }),
      call('typo', 'edit', { path: 'm.js', old_string: 'function ad(a, b) {\n  return a+b', new_string: 'x' }),
      call('far', 'edit', { path: 'm.js', old_string: 'class Nothing extends Like {}', new_string: 'x' }),
    ],
    { files: { 'm.js': source } },
  )
  await h.run('edit')
  expect(h.toolResult('indent').error?.message).toBe(
    'old_string was not found in m.js. The closest text, at lines 5–7, differs only in whitespace or indentation:\n     5\tfunction sub(a, b) {\n     6\t  return a - b\n     7\t}\nIt must match the file exactly, whitespace and indentation included: read the file again and copy the text.',
  )
  expect(h.toolResult('typo').error?.message).toMatch(
    /^old_string was not found in m\.js\. The closest text, at lines 1–2, is \d+% alike:\n     1\tfunction add\(a, b\) \{\n     2\t  return a \+ b\n/,
  )
  expect(h.toolResult('far').error?.message).toBe(
    'old_string was not found in m.js. It must match the file exactly, whitespace and indentation included: read the file again and copy the text.',
  )
  expect(readFileSync(join(h.workspace, 'm.js'), 'utf8')).toBe(source)
})

test('without a language server row an edit or write of a project file says nothing of diagnostics', async () => {
  // The diagnostics seam is optional (docs/architecture.md, "Language servers"): no ctx.lsp, no line added, even
  // in a TypeScript project whose server program is nowhere.
  const h = await boot(
    [
      call('r', 'read', { path: 'src/a.ts' }),
      call('e', 'edit', { path: 'src/a.ts', old_string: '1', new_string: "'one'" }),
      call('w', 'write', { path: 'src/b.ts', content: 'export const b: number = "x"\n' }),
    ],
    {
      patch: '- id: lsp\n  disabled: true\n- id: tool-lsp\n  disabled: true\n',
      files: { 'tsconfig.json': '{}', 'src/a.ts': 'export const a: number = 1\n' },
    },
  )
  await h.run('edit a project file')
  expect(h.toolText('e')).toBe(
    "Edited src/a.ts: replaced 1 occurrence.\n-    1\texport const a: number = 1\n+    1\texport const a: number = 'one'",
  )
  expect(h.toolText('w')).toBe('Created src/b.ts (29 bytes, 1 line).')
})
