import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import { type Fs, type FsEntry, FsError, FsIoConfig } from '@dsh/fs'
import LocalFs from './index.ts'

let dir: string
let fs: Fs

beforeEach(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fs-list-')))
  for (const name of ['b.txt', 'a/x.txt', 'a/deep/y.txt', 'node_modules/pkg/index.js']) {
    mkdirSync(join(dir, name, '..'), { recursive: true })
    writeFileSync(join(dir, name), name)
  }
  const root = new Context()
  await root.plugin(LocalFs, FsIoConfig({}))
  fs = root.fs
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

async function collect(walk: AsyncIterable<FsEntry>): Promise<string[]> {
  const seen: string[] = []
  for await (const entry of walk) seen.push(entry.relativePath)
  return seen
}

test('list returns the entries of a directory sorted by name with their types', async () => {
  const entries = await fs.list(dir)
  expect(entries.map((e) => [e.name, e.type])).toEqual([
    ['a', 'directory'],
    ['b.txt', 'file'],
    ['node_modules', 'directory'],
  ])
})

test('listing a file fails with FS_NOT_A_DIRECTORY', async () => {
  const error = await fs.list(join(dir, 'b.txt')).catch((e: FsError) => e)
  expect((error as FsError).code).toBe('FS_NOT_A_DIRECTORY')
})

test('walk goes depth first and a skipped directory is not descended into', async () => {
  const seen = await collect(fs.walk(dir, { skip: (entry) => entry.name === 'node_modules' }))
  expect(seen).toEqual(['a', 'a/deep', 'a/deep/y.txt', 'a/x.txt', 'b.txt'])
})

test('walk stops at maxDepth', async () => {
  expect(await collect(fs.walk(dir, { maxDepth: 0 }))).toEqual(['a', 'b.txt', 'node_modules'])
})

test('walk does not follow links unless asked, and visits a linked folder once when it does', async () => {
  symlinkSync(dir, join(dir, 'a', 'loop'))
  const plain = await collect(fs.walk(join(dir, 'a')))
  expect(plain).toEqual(['deep', 'deep/y.txt', 'loop', 'x.txt'])
  const followed = await collect(fs.walk(join(dir, 'a'), { followSymlinks: true }))
  // The link leads back to the walk's parent: its other entries are reached, `a` itself is not walked twice.
  expect(followed.filter((p) => p.endsWith('.txt'))).toEqual(['deep/y.txt', 'loop/b.txt', 'x.txt'])
})
