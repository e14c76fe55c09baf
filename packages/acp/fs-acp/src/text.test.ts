import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { FsIoConfig, type ReadTextOptions } from '@dsh/fs'
import { readTextRange } from '@dsh/fs-disk'
import { sliceText } from './text.ts'

// The editor's text must read exactly like the same text read from the disk by the local provider, so a
// tool cannot tell (line numbers, caps, truncation) which one answered.
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'fs-acp-text-')))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const config = FsIoConfig({ maxTextBytes: 24 })
const texts: Record<string, string> = {
  empty: '',
  oneLine: 'just one line',
  terminated: 'a\nb\nc\n',
  unterminated: 'a\nb\nc',
  crlf: 'first\r\nsecond\r\n',
  blankLines: '\n\n\nend\n',
  longFirstLine: 'ééééééééééééééééééééééé long first line\nshort\n',
  capped: 'line one is here\nline two is here\nline three\n',
}
const ranges: ReadTextOptions[] = [
  {},
  { startLine: 2 },
  { startLine: 2, maxLines: 1 },
  { startLine: 9 },
  { maxLines: 2 },
  { maxBytes: 7 },
  { startLine: 3, maxBytes: 5 },
]

test.each(Object.entries(texts))("the editor's text reads like the same file on disk (%s)", async (name, text) => {
  const file = join(dir, `${name}.txt`)
  writeFileSync(file, text)
  for (const options of ranges) {
    const local = await readTextRange(file, options, config)
    const fromEditor = sliceText(file, local.path, text, options, config, local.version)
    expect(fromEditor, JSON.stringify(options)).toEqual(local)
  }
})

test('a range argument that is not a whole positive number is refused like a local read', () => {
  expect(() => sliceText('/x', '/x', 'a\n', { startLine: 0 }, config, { mtimeMs: 0, size: 0 })).toThrow(
    expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }),
  )
})
