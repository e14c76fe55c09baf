import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import {
  access,
  copyFile,
  type FileHandle,
  link,
  lstat,
  mkdir,
  open,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
} from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { FsError, toFsError } from '@dsh/fs'
import type { FsVersion, MkdirResult, WriteResult } from '@dsh/fs'
import { pathExists, versionOf } from './read.ts'

/**
 * Called with a real directory right before an entry in it is created, replaced or removed; throws to stop
 * the operation. A fenced provider re-checks there that the directory still resolves to itself inside its
 * roots, which narrows the window between its check and the effect to the syscall itself.
 */
export type DirectoryGuard = (dir: string) => Promise<void>

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw toFsError(error, path)
  }
}

function sameVersion(a: FsVersion, b: FsVersion): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs
}

function refuseChanged(path: string, expected: FsVersion, now: Stats | undefined): never {
  const found = now ? `now ${now.size} bytes, modified ${new Date(now.mtimeMs).toISOString()}` : 'it is gone'
  throw new FsError('FS_CHANGED', path, `"${path}" changed since it was read (${found}); read it again before writing`)
}

export interface AtomicWriteOptions {
  createParents?: boolean
  mode?: number
  /** Refuse with FS_NOT_FOUND when the file does not exist yet. */
  mustExist?: boolean
  expect?: FsVersion
  fsync: boolean
  guard?: DirectoryGuard
}

/**
 * Writes `target` (a real path) through a temp file created exclusively in the same directory and renamed
 * over it, so no reader ever sees half a file and a failed write leaves the old one. An existing file keeps
 * its permission bits; one the operating system would not let us write is refused as it would be in place.
 */
export async function writeFileAtomically(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions,
): Promise<WriteResult> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  const existing = await lstatOrUndefined(target)
  if (existing?.isDirectory()) throw new FsError('FS_IS_DIRECTORY', target, `"${target}" is a directory, not a file`)
  if (existing && !existing.isFile() && !existing.isSymbolicLink())
    throw new FsError('FS_NOT_A_FILE', target, `"${target}" is not a regular file`)
  if (!existing && options.mustExist) throw new FsError('FS_NOT_FOUND', target, `"${target}" does not exist`)
  if (options.expect && (!existing || !sameVersion(options.expect, versionOf(existing))))
    refuseChanged(target, options.expect, existing)
  if (existing) {
    try {
      await access(target, constants.W_OK)
    } catch (error) {
      throw toFsError(error, target)
    }
  }
  const parent = dirname(target)
  if (options.createParents) await makeDirectory(parent, { recursive: true, guard: options.guard })
  else await requireDirectory(parent)

  await options.guard?.(parent)
  const temp = join(parent, `.${basename(target)}.${randomBytes(6).toString('hex')}.dsh-tmp`)
  let handle: FileHandle | undefined
  try {
    // `wx` is O_CREAT|O_EXCL: it never opens an existing file and never follows a link planted at that name.
    handle = await open(temp, 'wx', existing ? existing.mode & 0o7777 : (options.mode ?? 0o666))
    await handle.writeFile(bytes)
    if (existing) await handle.chmod(existing.mode & 0o7777) // the umask applied at open must not change it
    if (options.fsync) await handle.sync()
    const written = await handle.stat()
    await handle.close()
    handle = undefined
    if (options.expect) {
      const now = await lstatOrUndefined(target)
      if (!now || !sameVersion(options.expect, versionOf(now))) refuseChanged(target, options.expect, now)
    }
    await options.guard?.(parent)
    await rename(temp, target)
    if (options.fsync) await syncDirectory(parent)
    return { path: target, bytes: bytes.byteLength, created: !existing, version: versionOf(written) }
  } catch (error) {
    await handle?.close().catch(() => undefined)
    await rm(temp, { force: true }).catch(() => undefined)
    throw toFsError(error, target)
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function requireDirectory(dir: string): Promise<void> {
  let stats: Stats
  try {
    stats = await stat(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT')
      throw new FsError('FS_NOT_FOUND', dir, `parent directory "${dir}" does not exist`, { cause: error })
    throw toFsError(error, dir)
  }
  if (!stats.isDirectory()) throw new FsError('FS_NOT_A_DIRECTORY', dir, `"${dir}" is not a directory`)
}

/** Creates `target` (a real path) one level at a time, each level after its parent passed the guard. */
export async function makeDirectory(
  target: string,
  options: { recursive: boolean; guard?: DirectoryGuard },
): Promise<MkdirResult> {
  const missing: string[] = []
  for (let dir = target; ;) {
    const stats = await lstatOrUndefined(dir).catch((error: FsError) => {
      if (error.code === 'FS_NOT_A_DIRECTORY') return undefined
      throw error
    })
    if (stats) {
      if (!stats.isDirectory())
        throw new FsError(
          dir === target ? 'FS_EXISTS' : 'FS_NOT_A_DIRECTORY',
          dir,
          `"${dir}" exists and is not a directory`,
        )
      break
    }
    missing.unshift(dir)
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  if (!missing.length) return { path: target, created: false }
  if (!options.recursive && missing.length > 1) {
    throw new FsError('FS_NOT_FOUND', target, `parent directory "${dirname(target)}" does not exist`)
  }
  for (const level of missing) {
    await options.guard?.(dirname(level))
    try {
      await mkdir(level)
    } catch (error) {
      // Someone else made it meanwhile: fine if it is a real directory (not a link planted there).
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await lstatOrUndefined(level))?.isDirectory()) continue
      throw toFsError(error, level)
    }
  }
  return { path: target, created: true }
}

/** Removes the entry at `target` (parent real, last name not followed): a link is removed, not its target. */
export async function removeEntry(
  target: string,
  options: { recursive: boolean; guard?: DirectoryGuard },
): Promise<void> {
  const stats = await lstatOrUndefined(target)
  if (!stats) throw new FsError('FS_NOT_FOUND', target, `"${target}" does not exist`)
  await options.guard?.(dirname(target))
  try {
    if (!stats.isDirectory()) await unlink(target)
    else if (options.recursive) await rm(target, { recursive: true })
    else await rmdir(target)
  } catch (error) {
    const fsError = toFsError(error, target)
    if (fsError.code === 'FS_NOT_EMPTY')
      throw new FsError(
        'FS_NOT_EMPTY',
        target,
        `directory "${target}" is not empty (pass recursive to remove it with its contents)`,
        { cause: error },
      )
    throw fsError
  }
}

/** Moves the entry `from` to `to` (both parent-real, last names not followed). */
export async function renameEntry(
  from: string,
  to: string,
  options: { overwrite: boolean; guard?: DirectoryGuard },
): Promise<void> {
  const source = await lstatOrUndefined(from)
  if (!source) throw new FsError('FS_NOT_FOUND', from, `"${from}" does not exist`)
  const destination = await lstatOrUndefined(to)
  if (destination) {
    if (destination.isDirectory())
      throw new FsError(
        'FS_IS_DIRECTORY',
        to,
        `"${to}" is an existing directory; move into it by naming the full destination path`,
      )
    if (!options.overwrite) throw new FsError('FS_EXISTS', to, `"${to}" already exists (pass overwrite to replace it)`)
  }
  await requireDirectory(dirname(to))
  await options.guard?.(dirname(from))
  await options.guard?.(dirname(to))
  try {
    await rename(from, to)
  } catch (error) {
    throw toFsError(error, from)
  }
}

/**
 * Gives `target` the bytes of `source` unless it exists already: a hard link where the file system allows,
 * else a copy. For content-addressed stores (checkpoints, attachments), where a name already present holds
 * the same bytes.
 */
export async function linkOrCopyOnce(source: string, target: string): Promise<void> {
  if (await pathExists(target)) return
  await link(source, target).catch(() => copyFile(source, target))
}
