import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import { type Fs, FsError, FsIoConfig } from '@dsh/fs'
import { writeFileAtomically } from '@dsh/fs-disk'
import type { SandboxAuthority } from '@dsh/sandbox'
import FencedFs, { admit } from './index.ts'

let base: string
let ws: string
let outside: string
let fs: Fs
let workspaceWrite: SandboxAuthority

beforeEach(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fs-fenced-')))
  ws = join(base, 'ws')
  outside = join(base, 'outside')
  mkdirSync(ws)
  mkdirSync(outside)
  workspaceWrite = { mode: 'workspace-write', writableRoots: [ws] }
  const root = new Context()
  await root.plugin(FencedFs, FsIoConfig({ fsync: false }))
  fs = root.fs
})

afterEach(() => rmSync(base, { recursive: true, force: true }))

async function refusal(promise: Promise<unknown>): Promise<FsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FsError)
  expect((error as FsError).code).toBe('FS_SANDBOX_DENIED')
  return error as FsError
}

test('a write inside the workspace succeeds', async () => {
  const result = await fs.writeFile(join(ws, 'a.txt'), 'hello\n', { authority: workspaceWrite })
  expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('hello\n')
  expect(result).toMatchObject({ path: join(ws, 'a.txt'), bytes: 6, created: true })
})

test('a write outside the workspace is refused, names path, mode and roots, and leaves no file', async () => {
  const error = await refusal(fs.writeFile(join(outside, 'x.txt'), 'pwned', { authority: workspaceWrite }))
  expect(error.message).toContain(join(outside, 'x.txt'))
  expect(error.message).toContain('workspace-write')
  expect(error.message).toContain(ws)
  expect(existsSync(join(outside, 'x.txt'))).toBe(false)
})

test('a write through a symlinked directory inside the workspace pointing outside is refused', async () => {
  symlinkSync(outside, join(ws, 'link'))
  const error = await refusal(fs.writeFile(join(ws, 'link', 'x.txt'), 'pwned', { authority: workspaceWrite }))
  expect(error.message).toContain(`resolves to "${join(outside, 'x.txt')}"`)
  expect(existsSync(join(outside, 'x.txt'))).toBe(false)
})

test('a write to a symlinked file pointing outside is refused and the outside file keeps its content', async () => {
  writeFileSync(join(outside, 'secret.txt'), 'original')
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'secret.txt'))
  await refusal(fs.replaceFile(join(ws, 'secret.txt'), 'pwned', { authority: workspaceWrite }))
  expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('original')
  expect(readlinkSync(join(ws, 'secret.txt'))).toBe(join(outside, 'secret.txt'))
})

test('a dangling symlink pointing outside is refused and its target is not created', async () => {
  symlinkSync(join(outside, 'new.txt'), join(ws, 'dangling'))
  await refusal(fs.writeFile(join(ws, 'dangling'), 'pwned', { authority: workspaceWrite }))
  expect(existsSync(join(outside, 'new.txt'))).toBe(false)
})

test('a ../ escape from the workspace is refused and the file is absent', async () => {
  await refusal(fs.writeFile(`${ws}/../outside/x.txt`, 'pwned', { authority: workspaceWrite }))
  expect(existsSync(join(outside, 'x.txt'))).toBe(false)
})

test('.. after a symlink climbs from the link target, as the kernel does, and is refused', async () => {
  mkdirSync(join(outside, 'deep'))
  symlinkSync(join(outside, 'deep'), join(ws, 'link'))
  // Lexically this is ws/x.txt; the kernel resolves link first and lands in outside/x.txt.
  await refusal(fs.writeFile(`${ws}/link/../x.txt`, 'pwned', { authority: workspaceWrite }))
  expect(existsSync(join(outside, 'x.txt'))).toBe(false)
  expect(existsSync(join(ws, 'x.txt'))).toBe(false)
})

test('.. that stays inside the workspace is allowed', async () => {
  mkdirSync(join(ws, 'sub'))
  await fs.writeFile(`${ws}/sub/../b.txt`, 'ok', { authority: workspaceWrite })
  expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('ok')
})

test('a write with createParents creates a new nested directory inside the workspace', async () => {
  await fs.writeFile(join(ws, 'a', 'b', 'c', 'file.txt'), 'deep', { authority: workspaceWrite, createParents: true })
  expect(readFileSync(join(ws, 'a', 'b', 'c', 'file.txt'), 'utf8')).toBe('deep')
})

test('a refused nested write creates no directory', async () => {
  await refusal(
    fs.writeFile(join(outside, 'a', 'b', 'file.txt'), 'x', { authority: workspaceWrite, createParents: true }),
  )
  expect(readdirSync(outside)).toEqual([])
})

test('mkdir creates a nested directory inside the workspace and refuses one outside', async () => {
  const made = await fs.mkdir(join(ws, 'x', 'y'), { authority: workspaceWrite })
  expect(made.created).toBe(true)
  expect(statSync(join(ws, 'x', 'y')).isDirectory()).toBe(true)
  await refusal(fs.mkdir(join(outside, 'x', 'y'), { authority: workspaceWrite }))
  expect(existsSync(join(outside, 'x'))).toBe(false)
})

test('read-only refuses every kind of write and changes nothing', async () => {
  writeFileSync(join(ws, 'keep.txt'), 'keep')
  const readOnly: SandboxAuthority = { mode: 'read-only', writableRoots: [] }
  const error = await refusal(fs.writeFile(join(ws, 'new.txt'), 'x', { authority: readOnly }))
  expect(error.message).toContain('read-only')
  await refusal(fs.replaceFile(join(ws, 'keep.txt'), 'x', { authority: readOnly }))
  await refusal(fs.mkdir(join(ws, 'dir'), { authority: readOnly }))
  await refusal(fs.remove(join(ws, 'keep.txt'), { authority: readOnly }))
  await refusal(fs.rename(join(ws, 'keep.txt'), join(ws, 'moved.txt'), { authority: readOnly }))
  expect(readdirSync(ws)).toEqual(['keep.txt'])
  expect(readFileSync(join(ws, 'keep.txt'), 'utf8')).toBe('keep')
})

test('read-only still allows reading', async () => {
  writeFileSync(join(outside, 'r.txt'), 'readable\n')
  expect((await fs.readText(join(outside, 'r.txt'))).text).toBe('readable\n')
})

test('danger-full-access allows writing outside the writable roots', async () => {
  await fs.writeFile(join(outside, 'x.txt'), 'allowed', {
    authority: { mode: 'danger-full-access', writableRoots: [ws] },
  })
  expect(readFileSync(join(outside, 'x.txt'), 'utf8')).toBe('allowed')
})

test('a missing or unknown authority is refused', async () => {
  await refusal(fs.writeFile(join(ws, 'x.txt'), 'x', { authority: undefined as unknown as SandboxAuthority }))
  await refusal(
    fs.writeFile(join(ws, 'x.txt'), 'x', {
      authority: { mode: 'yolo', writableRoots: [ws] } as unknown as SandboxAuthority,
    }),
  )
  expect(existsSync(join(ws, 'x.txt'))).toBe(false)
})

test('a writable root given through a symlink is resolved before the check', async () => {
  symlinkSync(ws, join(base, 'ws-link'))
  await fs.writeFile(join(ws, 'via-root-link.txt'), 'ok', {
    authority: { mode: 'workspace-write', writableRoots: [join(base, 'ws-link')] },
  })
  expect(readFileSync(join(ws, 'via-root-link.txt'), 'utf8')).toBe('ok')
})

test('removing a symlink inside the workspace removes the link and not its outside target', async () => {
  writeFileSync(join(outside, 'target.txt'), 'kept')
  symlinkSync(join(outside, 'target.txt'), join(ws, 'link'))
  await fs.remove(join(ws, 'link'), { authority: workspaceWrite })
  expect(existsSync(join(ws, 'link'))).toBe(false)
  expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('kept')
})

test('a recursive remove inside the workspace never follows links out of it', async () => {
  writeFileSync(join(outside, 'precious.txt'), 'kept')
  mkdirSync(join(ws, 'dir'))
  symlinkSync(outside, join(ws, 'dir', 'out'))
  await fs.remove(join(ws, 'dir'), { authority: workspaceWrite, recursive: true })
  expect(existsSync(join(ws, 'dir'))).toBe(false)
  expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('kept')
})

test('removing a writable root itself is refused', async () => {
  await refusal(fs.remove(ws, { authority: workspaceWrite, recursive: true }))
  expect(existsSync(ws)).toBe(true)
})

test('renaming out of the workspace is refused and the source stays', async () => {
  writeFileSync(join(ws, 'a.txt'), 'a')
  await refusal(fs.rename(join(ws, 'a.txt'), join(outside, 'a.txt'), { authority: workspaceWrite }))
  expect(existsSync(join(ws, 'a.txt'))).toBe(true)
  expect(existsSync(join(outside, 'a.txt'))).toBe(false)
})

test('renaming inside the workspace moves the file', async () => {
  writeFileSync(join(ws, 'a.txt'), 'a')
  await fs.rename(join(ws, 'a.txt'), join(ws, 'b.txt'), { authority: workspaceWrite })
  expect(readdirSync(ws)).toEqual(['b.txt'])
})

test('a write through a symlink that stays inside writes the target and keeps the link', async () => {
  writeFileSync(join(ws, 'real.txt'), 'old')
  symlinkSync(join(ws, 'real.txt'), join(ws, 'alias.txt'))
  const result = await fs.replaceFile(join(ws, 'alias.txt'), 'new', { authority: workspaceWrite })
  expect(result.path).toBe(join(ws, 'real.txt'))
  expect(readlinkSync(join(ws, 'alias.txt'))).toBe(join(ws, 'real.txt'))
  expect(readFileSync(join(ws, 'real.txt'), 'utf8')).toBe('new')
})

test('a replace keeps the file mode and leaves no temp file behind', async () => {
  writeFileSync(join(ws, 'run.sh'), 'echo 1\n')
  chmodSync(join(ws, 'run.sh'), 0o750)
  await fs.replaceFile(join(ws, 'run.sh'), 'echo 2\n', { authority: workspaceWrite })
  expect(statSync(join(ws, 'run.sh')).mode & 0o777).toBe(0o750)
  expect(readdirSync(ws)).toEqual(['run.sh'])
})

test('a replace is refused with FS_CHANGED when the file changed since it was read', async () => {
  writeFileSync(join(ws, 'f.txt'), 'one\n')
  const read = await fs.readText(join(ws, 'f.txt'))
  writeFileSync(join(ws, 'f.txt'), 'someone else\n')
  const error = await fs
    .replaceFile(join(ws, 'f.txt'), 'mine\n', { authority: workspaceWrite, expect: read.version })
    .catch((e: FsError) => e)
  expect((error as FsError).code).toBe('FS_CHANGED')
  expect(readFileSync(join(ws, 'f.txt'), 'utf8')).toBe('someone else\n')
})

test('a directory swapped for an outside symlink after the check is refused before the rename', async () => {
  mkdirSync(join(ws, 'sub'))
  const { target, guard } = await admit('write', join(ws, 'sub', 'x.txt'), workspaceWrite, 'through')
  // Another process replaces the checked directory with a link out of the workspace.
  rmSync(join(ws, 'sub'), { recursive: true })
  symlinkSync(outside, join(ws, 'sub'))
  const error = await writeFileAtomically(target, 'pwned', { fsync: false, guard }).catch((e: FsError) => e)
  expect((error as FsError).code).toBe('FS_SANDBOX_DENIED')
  expect(readdirSync(outside)).toEqual([])
})
