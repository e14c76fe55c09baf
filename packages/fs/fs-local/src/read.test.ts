import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import { type Fs, FsError, FsIoConfig } from '@dsh/fs'
import LocalFs from './index.ts'

let dir: string

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fs-read-')))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

async function mount(config: Partial<FsIoConfig> = {}): Promise<Fs> {
  const root = new Context()
  await root.plugin(LocalFs, FsIoConfig(config))
  return root.fs
}

function file(name: string, content: string | Uint8Array): string {
  writeFileSync(join(dir, name), content)
  return join(dir, name)
}

async function failure(promise: Promise<unknown>): Promise<FsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FsError)
  return error as FsError
}

// Lines of varied length (some empty, some multi-byte) so chunk edges fall everywhere.
function sampleLines(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    i % 7 === 3 ? '' : `line ${i + 1} ${'é'.repeat(i % 5)}${'x'.repeat((i * 37) % 90)}`,
  )
}

test('a line range of a large file returns exactly those lines and counts every line', async () => {
  const lines = sampleLines(60_000)
  const path = file('big.txt', lines.join('\n') + '\n')
  const fs = await mount()
  const result = await fs.readText(path, { startLine: 40_001, maxLines: 25 })
  expect(result.text).toBe(lines.slice(40_000, 40_025).join('\n') + '\n')
  expect(result).toMatchObject({ totalLines: 60_000, startLine: 40_001, endLine: 40_025, truncated: false })
  expect(result.bytes).toBe(Buffer.byteLength(lines.join('\n') + '\n'))
})

test('line ranges are exact wherever the scan chunks split the file', async () => {
  const lines = sampleLines(300)
  const content = lines.join('\n') // no final newline: the last line still counts
  const path = file('chunks.txt', content)
  const fs = await mount({ readChunkBytes: 7 })
  for (const [startLine, maxLines] of [
    [1, 1],
    [1, 300],
    [2, 5],
    [150, 40],
    [299, 10],
    [300, 1],
    [4, 1],
  ]) {
    const result = await fs.readText(path, { startLine, maxLines })
    const expected = lines.slice(startLine - 1, startLine - 1 + maxLines)
    const last = startLine - 1 + expected.length
    expect(result.text).toBe(expected.join('\n') + (last < lines.length ? '\n' : ''))
    expect([result.totalLines, result.endLine]).toEqual([300, last])
  }
})

test('a range past the end of the file is empty and says where the file ends', async () => {
  const fs = await mount()
  const result = await fs.readText(file('short.txt', 'a\nb\n'), { startLine: 10 })
  expect(result).toMatchObject({ text: '', totalLines: 2, startLine: 10, endLine: 9, truncated: false })
})

test('a range over the byte cap is cut at a line end and marked truncated', async () => {
  const fs = await mount({ maxTextBytes: 10 })
  const result = await fs.readText(file('cap.txt', 'abc\ndef\nghi\njkl\n'))
  expect(result).toMatchObject({ text: 'abc\ndef\n', startLine: 1, endLine: 2, truncated: true, totalLines: 4 })
})

test('a caller may ask for fewer bytes than the cap but not more', async () => {
  const fs = await mount({ maxTextBytes: 8 })
  const path = file('ask.txt', 'abc\ndef\nghi\n')
  expect((await fs.readText(path, { maxBytes: 4 })).text).toBe('abc\n')
  expect((await fs.readText(path, { maxBytes: 1000 })).text).toBe('abc\ndef\n')
})

test('a first line longer than the cap is cut on a character boundary', async () => {
  const fs = await mount({ maxTextBytes: 6 })
  const result = await fs.readText(file('wide.txt', 'aéééé\nnext\n')) // a(1) é(2) é(2) é|(cut)
  expect(result).toMatchObject({ text: 'aéé', endLine: 1, truncated: true })
})

test('a byte-order mark and CRLF line ends are kept so the text can be written back unchanged', async () => {
  const fs = await mount()
  const result = await fs.readText(file('bom.txt', '\uFEFFone\r\ntwo\r\n'))
  expect(result.text).toBe('\uFEFFone\r\ntwo\r\n')
  expect(result.totalLines).toBe(2)
})

test('an empty file has no lines', async () => {
  const fs = await mount()
  expect(await fs.readText(file('empty.txt', ''))).toMatchObject({ text: '', totalLines: 0, endLine: 0, bytes: 0 })
})

test('a binary file is detected and refused as text', async () => {
  const fs = await mount()
  const path = file('image.bin', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]))
  expect(await fs.isBinary(path)).toBe(true)
  expect(await fs.isBinary(file('text.txt', 'plain ünïcode\n'))).toBe(false)
  expect((await failure(fs.readText(path))).code).toBe('FS_BINARY')
  expect([...(await fs.readBytes(path))]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02])
})

test('invalid UTF-8 counts as binary', async () => {
  const fs = await mount()
  expect(await fs.isBinary(file('latin1.txt', Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x21])))).toBe(true)
})

test('a file over the read limit is refused with FS_TOO_LARGE', async () => {
  const fs = await mount({ maxFileBytes: 1000 })
  const path = file('large.txt', 'x'.repeat(1001))
  const error = await failure(fs.readText(path, { startLine: 1, maxLines: 1 }))
  expect(error.code).toBe('FS_TOO_LARGE')
  expect(error.message).toContain('1001 bytes')
  expect((await failure(fs.readBytes(path))).code).toBe('FS_TOO_LARGE')
  expect((await failure(fs.readBytes(file('small.txt', 'x'.repeat(11)), { maxBytes: 10 }))).code).toBe('FS_TOO_LARGE')
})

test('reading a directory or a missing file fails with a code naming the problem', async () => {
  const fs = await mount()
  mkdirSync(join(dir, 'sub'))
  expect((await failure(fs.readText(join(dir, 'sub')))).code).toBe('FS_IS_DIRECTORY')
  const missing = await failure(fs.readText(join(dir, 'nope.txt')))
  expect(missing.code).toBe('FS_NOT_FOUND')
  expect(missing.message).toContain(join(dir, 'nope.txt'))
})

test('a relative path is refused', async () => {
  const fs = await mount()
  expect((await failure(fs.readText('relative.txt'))).code).toBe('FS_INVALID_PATH')
})

test('stat reports type, size and whether the path is a link', async () => {
  const fs = await mount()
  const stat = await fs.stat(file('s.txt', 'four'))
  expect(stat).toMatchObject({ type: 'file', size: 4, isSymlink: false, version: { size: 4 } })
  expect(await fs.exists(join(dir, 's.txt'))).toBe(true)
  expect(await fs.exists(join(dir, 'missing'))).toBe(false)
  expect((await failure(fs.stat(join(dir, 'missing')))).code).toBe('FS_NOT_FOUND')
})
