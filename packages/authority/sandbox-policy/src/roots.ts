import { realpathSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'

/**
 * The real paths of the directories in `candidates` that exist, in order, without duplicates. A root that
 * is relative, missing or not a directory is left out and reported: leaving it out only narrows what may be
 * written (fail closed), and a sandbox backend refuses a root it cannot bind. Synchronous calls: two
 * syscalls a root, asked for on every tool call, cost less than the thread pool's round trips.
 */
export async function resolveWritableRoots(
  candidates: string[],
): Promise<{ roots: string[]; skipped: { path: string; why: string }[] }> {
  const roots: string[] = []
  const skipped: { path: string; why: string }[] = []
  for (const path of candidates) {
    if (!isAbsolute(path)) {
      skipped.push({ path, why: 'not an absolute path' })
      continue
    }
    try {
      const real = realpathSync.native(path)
      if (!statSync(real).isDirectory()) skipped.push({ path, why: 'not a directory' })
      else if (!roots.includes(real)) roots.push(real)
    } catch {
      skipped.push({ path, why: 'does not exist' })
    }
  }
  return { roots, skipped }
}
