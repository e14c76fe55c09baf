// The provider alone, on real files: where each scope lives, what two spellings of one folder share, and that
// changes made at the same time all land.
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import { tempDir } from '@dsh/test-harness/world'
import MemoryFiles from './index.ts'

const limits = { maxBytes: 10_000, maxEntryChars: 200 }

function provider() {
  const dir = join(tempDir('dsh-memory-files-'), 'memory')
  return { dir, memory: new MemoryFiles(new Context(), { dir }) }
}

test('a link to a workspace shares its memory; another folder has its own', async () => {
  const { memory } = provider()
  const base = tempDir('dsh-memory-ws-')
  mkdirSync(join(base, 'repo'))
  mkdirSync(join(base, 'other'))
  symlinkSync(join(base, 'repo'), join(base, 'link'))
  await memory.append('workspace', join(base, 'link'), 'Uses make', limits)
  expect((await memory.read('workspace', join(base, 'repo'))).entries).toEqual(['Uses make'])
  expect((await memory.read('workspace', join(base, 'other'))).entries).toEqual([])
  expect((await memory.read('user', join(base, 'repo'))).entries).toEqual([])
})

test('changes made at the same time all land, in order, in a 0600 file', async () => {
  const { dir, memory } = provider()
  const cwd = tempDir('dsh-memory-ws-')
  await Promise.all(Array.from({ length: 20 }, (_, i) => memory.append('user', cwd, `entry ${i}`, limits)))
  const file = join(dir, 'user.md')
  expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toEqual(
    Array.from({ length: 20 }, (_, i) => `- entry ${i}`),
  )
  expect(statSync(file).mode & 0o777).toBe(0o600)
})

test('a file a person edited by hand is read line by line; a too long or empty entry is refused naming the cap', async () => {
  const { dir, memory } = provider()
  const cwd = tempDir('dsh-memory-ws-')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'user.md'), '- one\n\n* two\nthree\n')
  expect((await memory.read('user', cwd)).entries).toEqual(['one', 'two', 'three'])
  await expect(memory.append('user', cwd, 'x'.repeat(201), limits)).rejects.toMatchObject({
    code: 'MEMORY_ENTRY_TOO_LONG',
    message: expect.stringContaining('memory.maxEntryChars'),
  })
  await expect(memory.append('user', cwd, '\u0000\n\t', limits)).rejects.toMatchObject({ code: 'MEMORY_EMPTY_ENTRY' })
  expect(readFileSync(join(dir, 'user.md'), 'utf8')).toBe('- one\n\n* two\nthree\n')
})
