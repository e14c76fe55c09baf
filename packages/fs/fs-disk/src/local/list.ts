import type { Dirent } from 'node:fs'
import { readdir, realpath, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { toFsError } from '@dsh/fs'
import type { FsEntry, FsEntryType, WalkOptions } from '@dsh/fs'
import { requireAbsolute } from './paths.ts'

function typeOf(dirent: Dirent): FsEntryType {
  if (dirent.isFile()) return 'file'
  if (dirent.isDirectory()) return 'directory'
  if (dirent.isSymbolicLink()) return 'symlink'
  return 'other'
}

async function entriesOf(dir: string, relative: string, depth: number): Promise<FsEntry[]> {
  const dirents = await readdir(dir, { withFileTypes: true })
  return dirents
    .map((dirent) => ({
      name: dirent.name,
      path: join(dir, dirent.name),
      relativePath: relative ? `${relative}/${dirent.name}` : dirent.name,
      type: typeOf(dirent),
      depth,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

export async function listDirectory(path: string): Promise<FsEntry[]> {
  requireAbsolute(path)
  try {
    return await entriesOf(path, '', 0)
  } catch (error) {
    throw toFsError(error, path)
  }
}

async function isDirectoryLink(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false // dangling or unreadable: nothing to descend into
  }
}

/**
 * Depth first, pre-order. The root must be a readable directory; a directory below it that cannot be read
 * (removed meanwhile, no permission) is yielded and not descended into, so one bad folder does not end a walk.
 */
export async function* walkTree(path: string, options: WalkOptions = {}): AsyncGenerator<FsEntry> {
  const maxDepth = options.maxDepth ?? Infinity
  const visited = new Set<string>()
  let top: FsEntry[]
  try {
    top = await entriesOf(requireAbsolute(path), '', 0)
    if (options.followSymlinks) visited.add(await realpath(path))
  } catch (error) {
    throw toFsError(error, path)
  }
  const stack: FsEntry[][] = [top]
  while (stack.length) {
    const entry = stack.at(-1)!.shift()
    if (!entry) {
      stack.pop()
      continue
    }
    if (options.skip?.(entry)) continue
    yield entry
    if (entry.depth >= maxDepth) continue
    const descend =
      entry.type === 'directory' ||
      (options.followSymlinks && entry.type === 'symlink' && (await isDirectoryLink(entry.path)))
    if (!descend) continue
    try {
      if (options.followSymlinks) {
        const real = await realpath(entry.path)
        if (visited.has(real)) continue // a link cycle or a second way into the same folder
        visited.add(real)
      }
      stack.push(await entriesOf(entry.path, entry.relativePath, entry.depth + 1))
    } catch {
      continue
    }
  }
}
