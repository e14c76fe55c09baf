// The folder snapshot on real files: what a walk sees, what it skips, when it gives up, what a change is.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { Manifest, manifestChanges, type ManifestOptions } from './manifest.ts'
import { BlobStore } from './store.ts'

function folder(files: Record<string, string>, options: Partial<ManifestOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-manifest-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  const root = join(dir, 'ws')
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  mkdirSync(root, { recursive: true })
  const pool = new BlobStore(join(dir, 'pool'))
  const manifest = new Manifest(
    root,
    pool,
    { racyWindowMs: 1000, maxFileBytes: 100, maxFiles: 50, maxBytes: 1000, skipDirs: ['node_modules'], ...options },
    [join(root, '.home')],
  )
  return { root, pool, manifest, all: () => true }
}

const everything = async () => () => true
const scanned = async (m: Manifest) => {
  const scan = await m.scan(everything)
  if ('overflow' in scan) throw new Error('overflowed')
  return scan.files
}

test('a walk lists files (not skipped folders, not dsh home), keeps their bytes by sha256 and sees each kind of change', async () => {
  const { root, pool, manifest } = folder({
    'a.txt': 'one\n',
    'sub/b.txt': 'two\n',
    'node_modules/x.js': 'dep\n',
    '.home/sessions/log': 'dsh\n',
    'big.bin': 'x'.repeat(101),
  })
  symlinkSync('/etc/passwd', join(root, 'link'))
  const before = await scanned(manifest)
  expect([...before.keys()].sort()).toEqual(['a.txt', 'big.bin', 'link', 'sub/b.txt'])
  expect(before.get('big.bin')!.state).toEqual({ unrecorded: 'too-large' })
  expect(before.get('link')!.state).toEqual({ unrecorded: 'not-a-file' })
  expect(readdirSync(pool.dir)).toHaveLength(2) // a.txt and sub/b.txt: not the link's target, not the big file
  writeFileSync(join(root, 'a.txt'), 'uno\n') // the same size
  rmSync(join(root, 'sub/b.txt'))
  writeFileSync(join(root, 'c.txt'), 'new\n')
  writeFileSync(join(root, 'big.bin'), 'y'.repeat(102))
  const after = await scanned(manifest)
  const changes = manifestChanges(before, after).sort((x, y) => x.path.localeCompare(y.path))
  expect(changes.map((change) => [change.path, Object.keys(change.before)[0], Object.keys(change.after)[0]])).toEqual([
    ['a.txt', 'sha256', 'sha256'],
    ['big.bin', 'unrecorded', 'unrecorded'],
    ['c.txt', 'absent', 'sha256'],
    ['sub/b.txt', 'sha256', 'absent'],
  ])
  expect(manifestChanges(after, await scanned(manifest))).toEqual([]) // nothing written since: no change
})

test('a workspace over maxFiles or maxBytes overflows instead of being half listed', async () => {
  const many = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, 'x'.repeat(60)]))
  expect(await folder(many, { maxFiles: 5 }).manifest.scan(everything)).toEqual({ overflow: true })
  expect(await folder(many, { maxBytes: 300 }).manifest.scan(everything)).toEqual({ overflow: true })
  expect('files' in (await folder(many).manifest.scan(everything))).toBe(true)
})

test('a path the session may not read is fingerprinted by its stat, never read into the pool', async () => {
  const { root, pool, manifest } = folder({ 'vault/key': 'SECRET\n', 'a.txt': 'one\n' })
  const files = await manifest.scan(async () => (path) => !path.startsWith(join(root, 'vault')))
  expect('files' in files && files.files.get('vault/key')!.state).toEqual({ unrecorded: 'secret' })
  expect(readdirSync(pool.dir)).toHaveLength(1)
})

test('a file whose stat is what it was when read is not read again; a stat too recent to trust is', async () => {
  const trusting = folder({ 'a.txt': 'one\n' }, { racyWindowMs: 0 })
  await scanned(trusting.manifest)
  rmSync(trusting.pool.dir, { recursive: true })
  await scanned(trusting.manifest)
  expect(readdirSync(join(trusting.pool.dir, '..'))).not.toContain('pool') // not read, so not stored again
  const wary = folder({ 'a.txt': 'one\n' }, { racyWindowMs: 60_000 })
  await scanned(wary.manifest)
  rmSync(wary.pool.dir, { recursive: true })
  await scanned(wary.manifest)
  expect(readdirSync(wary.pool.dir)).toHaveLength(1)
})
