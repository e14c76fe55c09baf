// Snapshots on real repositories: what the stat comparison must never miss, and what it stores.
import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { changedFiles, gitWorkspace, readBlob, Snapshots } from './git.ts'

const dirs: string[] = []
const live: Snapshots[] = []
afterEach(async () => {
  await Promise.all(live.splice(0).map((snapshots) => snapshots.dispose()))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const options = { timeoutMs: 20_000, racyWindowMs: 1_000 }
const everything = async () => () => true

async function repository(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'dsh-snapshots-'))
  dirs.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  execFileSync('git', ['init', '-q'], { cwd: root })
  execFileSync('git', ['add', '-A'], { cwd: root })
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'initial'], {
    cwd: root,
  })
  const workspace = (await gitWorkspace(root, options))!
  const snapshots = new Snapshots(workspace, options)
  live.push(snapshots)
  return { root, workspace, snapshots }
}

/** The paths that differ between two snapshots, with what the after side holds. */
async function diff(workspace: Awaited<ReturnType<typeof repository>>['workspace'], before: string, after: string) {
  const changes = await changedFiles(workspace, before, after, options)
  return Promise.all(
    changes.map(async (change) => ({
      path: change.path,
      after: change.after ? (await readBlob(workspace, change.after.blob, options)).toString() : undefined,
      mode: change.after?.mode,
    })),
  )
}

test('an unchanged workspace gives the same tree; a same-size rewrite right after a snapshot is still seen', async () => {
  const { workspace, snapshots, root } = await repository({ 'a.txt': 'aaaa\n', 'src/b.txt': 'b\n' })
  const first = await snapshots.tree(everything)
  expect(await snapshots.tree(everything)).toBe(first)
  // Same size, right after the snapshot (the racy rule makes it look again whatever the clock's tick).
  writeFileSync(join(root, 'a.txt'), 'bbbb\n')
  const second = await snapshots.tree(everything)
  expect(await diff(workspace, first, second)).toEqual([{ path: 'a.txt', after: 'bbbb\n', mode: '100644' }])
})

test('each change alone is seen: a new file in a new folder or in an empty untracked one, a deletion, a rename, a mode change', async () => {
  const { workspace, root } = await repository({
    'a.txt': 'a\n',
    'gone.txt': 'gone\n',
    'old.txt': 'moved\n',
    'run.sh': 'echo\n',
  })
  mkdirSync(join(root, 'empty'))
  const quick = new Snapshots(workspace, { ...options, racyWindowMs: 50 })
  live.push(quick)
  let last = await quick.tree(everything)
  const after = async (change: () => void) => {
    // Every stat older than the racy window: only the stat comparison can notice the change.
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(await quick.tree(everything)).toBe(last)
    change()
    const now = await quick.tree(everything)
    const changes = await diff(workspace, last, now)
    last = now
    return changes
  }
  expect(await after(() => writeFileSync(join(root, 'empty', 'inside.txt'), 'inside\n'))).toEqual([
    { path: 'empty/inside.txt', after: 'inside\n', mode: '100644' },
  ])
  expect(
    await after(
      () => (
        mkdirSync(join(root, 'new/deep'), { recursive: true }),
        writeFileSync(join(root, 'new/deep/file.txt'), 'deep\n')
      ),
    ),
  ).toEqual([{ path: 'new/deep/file.txt', after: 'deep\n', mode: '100644' }])
  expect(await after(() => unlinkSync(join(root, 'gone.txt')))).toEqual([
    { path: 'gone.txt', after: undefined, mode: undefined },
  ])
  expect(await after(() => renameSync(join(root, 'old.txt'), join(root, 'renamed.txt')))).toEqual([
    { path: 'old.txt', after: undefined, mode: undefined },
    { path: 'renamed.txt', after: 'moved\n', mode: '100644' },
  ])
  expect(await after(() => chmodSync(join(root, 'run.sh'), 0o755))).toEqual([
    { path: 'run.sh', after: 'echo\n', mode: '100755' },
  ])
})

test('a link is stored as its target text, never followed; ignored files and paths hashable refuses stay out', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'dsh-snapshots-outside-'))
  dirs.push(outside)
  writeFileSync(join(outside, 'secret.txt'), 'SECRET-CONTENT\n')
  const { workspace, snapshots, root } = await repository({ '.gitignore': 'build/\n', 'a.txt': 'a\n' })
  const before = await snapshots.tree(everything)
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link'))
  mkdirSync(join(root, 'build'))
  writeFileSync(join(root, 'build/out.txt'), 'ignored\n')
  writeFileSync(join(root, 'vault.key'), 'KEY\n')
  const after = await snapshots.tree(async () => (path) => !path.endsWith('vault.key'))
  expect(await diff(workspace, before, after)).toEqual([
    { path: 'link', after: join(outside, 'secret.txt'), mode: '120000' },
  ])
  expect(statSync(join(root, '.git/index')).isFile()).toBe(true) // the user's index is left where it was
})

test("empty folders made and removed again in the root (a sandboxed command's fences) change no tree and cost no rescan; a name left behind is seen", async () => {
  const { workspace, root } = await repository({ 'a.txt': 'a\n', 'src/b.txt': 'b\n' })
  const quick = new Snapshots(workspace, { ...options, racyWindowMs: 50 })
  live.push(quick)
  let rescans = 0
  const counted = async () => (rescans++, () => true)
  // The files were just written: stats younger than the racy window are not trusted, so wait them out first.
  await new Promise((resolve) => setTimeout(resolve, 120))
  const first = await quick.tree(counted)
  await new Promise((resolve) => setTimeout(resolve, 120))
  for (let round = 0; round < 2; round++) {
    // What bubblewrap and the fence wrapper do around each confined command: the root's stat changes.
    for (const name of ['.husky', '.vscode', '.mcp.json']) mkdirSync(join(root, name))
    for (const name of ['.husky', '.vscode', '.mcp.json']) rmSync(join(root, name), { recursive: true })
    // Past the racy window: a stat younger than it is not trusted either way, and may be looked at again.
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(await quick.tree(counted)).toBe(first)
  }
  expect(rescans).toBe(1)
  // A new name in the root, and a folder replaced under the same name with other content: both seen.
  writeFileSync(join(root, 'new.txt'), 'new\n')
  const second = await quick.tree(counted)
  expect(await diff(workspace, first, second)).toEqual([{ path: 'new.txt', after: 'new\n', mode: '100644' }])
  rmSync(join(root, 'src'), { recursive: true })
  mkdirSync(join(root, 'src'))
  writeFileSync(join(root, 'src', 'c.txt'), 'c\n')
  const third = await quick.tree(counted)
  expect(await diff(workspace, second, third)).toEqual([
    { path: 'src/b.txt', after: undefined, mode: undefined },
    { path: 'src/c.txt', after: 'c\n', mode: '100644' },
  ])
})
