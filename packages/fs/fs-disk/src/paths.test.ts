import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { FsError } from '@dsh/fs'
import { isInside, resolveEntryPath, resolveRealPath } from './local/paths.ts'

let dir: string
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fs-paths-')))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('a sibling that shares the root as a prefix is not inside it', () => {
  expect(isInside('/work/ws', '/work/ws2/file')).toBe(false)
  expect(isInside('/work/ws', '/work/ws/file')).toBe(true)
  expect(isInside('/work/ws', '/work/ws')).toBe(true)
  expect(isInside('/', '/anything')).toBe(true)
})

test('the real path of a missing file resolves the links of its existing ancestors', async () => {
  mkdirSync(join(dir, 'target'))
  symlinkSync(join(dir, 'target'), join(dir, 'link'))
  expect(await resolveRealPath(join(dir, 'link', 'new', 'file.txt'))).toBe(join(dir, 'target', 'new', 'file.txt'))
})

test('.. in a missing part of the path is resolved against the real parent', async () => {
  expect(await resolveRealPath(`${dir}/new/../other.txt`)).toBe(join(dir, 'other.txt'))
})

test('a chain of dangling links resolves to where a write would land', async () => {
  symlinkSync(join(dir, 'second'), join(dir, 'first'))
  symlinkSync('nowhere/file.txt', join(dir, 'second'))
  expect(await resolveRealPath(join(dir, 'first'))).toBe(join(dir, 'nowhere', 'file.txt'))
})

test('a link cycle fails instead of looping', async () => {
  symlinkSync(join(dir, 'b'), join(dir, 'a'))
  symlinkSync(join(dir, 'a'), join(dir, 'b'))
  const error = await resolveRealPath(join(dir, 'a')).catch((e: FsError) => e)
  expect((error as FsError).code).toBe('FS_INVALID_PATH')
})

test('the entry path of a link is the link itself, and "." or ".." names no entry', async () => {
  symlinkSync('/', join(dir, 'link'))
  expect(await resolveEntryPath(join(dir, 'link'))).toBe(join(dir, 'link'))
  const error = await resolveEntryPath(`${dir}/..`).catch((e: FsError) => e)
  expect((error as FsError).code).toBe('FS_INVALID_PATH')
})
