import { realpath } from 'node:fs/promises'
import { isAbsolute } from 'node:path'
import { FsError } from '@dsh/fs'
import { isInside, requireAbsolute, resolveEntryPath, resolveRealPath } from './local/paths.ts'
import type { DirectoryGuard } from './local/write.ts'
import { SANDBOX_MODES, type SandboxAuthority } from '@dsh/sandbox'

/** What a write does, in the words of the refusal the model reads. */
export type WriteKind = 'write' | 'create directory' | 'remove' | 'rename' | 'rename onto'

/**
 * How the last name of a path is treated: `through` follows a link to where a write lands (writing a file,
 * creating a directory); `entry` acts on the link itself (remove, rename).
 */
export type Reach = 'through' | 'entry'

export interface Admission {
  /** The real path the operation acts on. */
  target: string
  /** Re-checks a directory right before an effect in it; absent when nothing is fenced. */
  guard?: DirectoryGuard
}

function describeRoots(roots: readonly string[]): string {
  return roots.length ? roots.map((root) => `"${root}"`).join(', ') : 'none'
}

function deny(kind: WriteKind, path: string, why: string): FsError {
  return new FsError('FS_SANDBOX_DENIED', path, `Refused to ${kind} "${path}": ${why}. Nothing was changed.`)
}

/** The roots that exist, symlinks resolved. A root that is missing or relative fences nothing in (fail closed). */
async function realRoots(roots: readonly string[]): Promise<string[]> {
  const real = await Promise.all(roots.map((root) => (typeof root === 'string' && isAbsolute(root) ? realpath(root).catch(() => undefined) : undefined)))
  return real.filter((root): root is string => root !== undefined)
}

/**
 * The write fence (DESIGN §8), shared by every fenced fs provider (fs-sandbox, fs-acp) so the security check
 * exists once. Decides whether `authority` lets `kind` touch `path`, before anything is changed. In workspace-write the
 * path is resolved the way the kernel will resolve it (links and `..` included) and must land inside a
 * writable root; the returned guard repeats the check on each directory right before the effect in it.
 */
export async function admit(kind: WriteKind, path: string, authority: SandboxAuthority, reach: Reach): Promise<Admission> {
  const mode = authority?.mode
  if (!SANDBOX_MODES.includes(mode)) throw deny(kind, String(path), `no valid sandbox authority was given (mode ${JSON.stringify(mode)})`)
  requireAbsolute(path)
  const given = Array.isArray(authority.writableRoots) ? authority.writableRoots : []
  if (mode === 'read-only') throw deny(kind, path, `the sandbox mode is read-only, which allows no writes (writable roots: ${describeRoots(given)})`)
  const target = reach === 'through' ? await resolveRealPath(path) : await resolveEntryPath(path)
  if (mode === 'danger-full-access') return { target }

  const roots = await realRoots(given)
  const resolvedNote = target === path ? '' : ` (it resolves to "${target}")`
  if (!roots.some((root) => isInside(root, target))) {
    throw deny(kind, path, `the path${resolvedNote} is outside the writable roots of the sandbox mode workspace-write (${describeRoots(given)})`)
  }
  if (reach === 'entry' && roots.includes(target)) {
    throw deny(kind, path, `it is a writable root itself, which the sandbox mode workspace-write does not let go (writable roots: ${describeRoots(given)})`)
  }
  const guard: DirectoryGuard = async (dir) => {
    const now = await realpath(dir).catch(() => undefined)
    if (now !== dir || !roots.some((root) => isInside(root, now))) {
      throw deny(kind, path, `the directory "${dir}" changed while the write was prepared (it now resolves to ${now ? `"${now}"` : 'nothing'}), outside the writable roots of the sandbox mode workspace-write (${describeRoots(given)})`)
    }
  }
  return { target, guard }
}
