import { lstat, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path'
import { FsError, toFsError } from '@dsh/fs'

// Linux gives up resolving after this many links (MAXSYMLINKS); following dangling links we do the same.
const MAX_SYMLINK_HOPS = 40

/** Every fs path is absolute: relative paths are the caller's to resolve against its own workspace. */
export function requireAbsolute(path: string): string {
  if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) {
    throw new FsError('FS_INVALID_PATH', String(path), `"${String(path)}" is not an absolute path`)
  }
  return path
}

/** Whether `path` is `root` or lies under it (both absolute and already real; pure, no disk access). */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true
  return path.startsWith(root.endsWith(sep) ? root : root + sep)
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

async function resolveFrom(path: string, hops: number): Promise<string> {
  try {
    return await realpath(path)
  } catch (error) {
    if (!isMissing(error)) throw toFsError(error, path)
  }
  const parent = dirname(path)
  if (parent === path) return path
  const realParent = await resolveFrom(parent, hops)
  const name = basename(path)
  // The parent is real, so `..` here means exactly what the kernel would make of it.
  if (name === '..') return dirname(realParent)
  if (name === '.' || name === '') return realParent
  const candidate = join(realParent, name)
  let link: string | undefined
  try {
    if ((await lstat(candidate)).isSymbolicLink()) link = await readlink(candidate)
  } catch (error) {
    if (!isMissing(error)) throw toFsError(error, path)
  }
  if (link === undefined) return candidate
  // A dangling link: writing through it creates its target, so the target is where the write lands.
  if (hops >= MAX_SYMLINK_HOPS)
    throw new FsError('FS_INVALID_PATH', path, `"${path}" has too many levels of symbolic links`)
  return resolveFrom(resolve(realParent, link), hops + 1)
}

/**
 * Where an operation on `path` really lands: every symlink resolved the way the kernel resolves it (`..`
 * after a link climbs from the link's target, not lexically), including a dangling link at the end; the
 * part that does not exist yet is appended as plain names.
 */
export function resolveRealPath(path: string): Promise<string> {
  return resolveFrom(requireAbsolute(path), 0)
}

/**
 * The location of the entry `path` names itself, for operations that act on a link rather than through it
 * (remove, rename): the parent resolved, the last name kept.
 */
export async function resolveEntryPath(path: string): Promise<string> {
  const name = basename(requireAbsolute(path))
  if (name === '' || name === '.' || name === '..') {
    throw new FsError('FS_INVALID_PATH', path, `"${path}" does not name an entry that can be removed or moved`)
  }
  return join(await resolveRealPath(dirname(path)), name)
}
