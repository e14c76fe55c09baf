import { basename, dirname, relative, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import { admitRead } from '@dsh/fs-disk'
import type { SandboxAuthority } from '@dsh/sandbox'
import { ToolError } from '@dsh/tools'

/** Where a search runs: the directory rg runs in, what it is given to search, and how results are prefixed. */
export interface SearchBase {
  /** Absolute directory the search runs in. */
  dir: string
  /** The single file searched, relative to `dir`, when the path named a file. */
  file?: string
  /** Prepended to result paths so they read relative to the session's working directory (or absolute). */
  prefix: string
  /** The session's authority: secret paths under it are left out of every search. */
  authority: SandboxAuthority
}

function prefixFor(cwd: string, dir: string): string {
  const rel = relative(cwd, dir)
  if (!rel) return ''
  return rel.startsWith('..') ? `${dir}/` : `${rel}/`
}

/** Resolves the `path` argument against the session's working directory; it must exist. */
export async function searchBase(
  ctx: Context,
  cwd: string,
  path: string | undefined,
  allowFile: boolean,
  authority: SandboxAuthority,
): Promise<SearchBase> {
  const target = resolve(cwd, path ?? '.')
  const stat = await ctx.fs.stat(target).catch((error: unknown) => {
    if (error instanceof FsError)
      throw new ToolError(
        error.code,
        `${error.message}. Search from an existing directory${allowFile ? ' or file' : ''}.`,
      )
    throw error
  })
  // A search inside a secret path is refused whole; one that starts above it leaves it out (see ripgrep.ts).
  await admitRead(target, authority).catch((error: unknown) =>
    Promise.reject(error instanceof FsError ? new ToolError(error.code, error.message) : error),
  )
  if (stat.type === 'directory') return { dir: target, prefix: prefixFor(cwd, target), authority }
  if (!allowFile) throw new ToolError('FS_NOT_A_DIRECTORY', `"${path}" is not a directory: glob searches a directory.`)
  return { dir: dirname(target), file: basename(target), prefix: prefixFor(cwd, dirname(target)), authority }
}

/**
 * `paths` (relative to `dir`) newest first by modification time, ties by path: what changed last is most
 * often what the model is after. A path that cannot be stat'ed (gone since the listing) sorts last.
 */
export async function newestFirst(ctx: Context, dir: string, paths: string[]): Promise<string[]> {
  const times = new Map<string, number>()
  await Promise.all(
    paths.map(async (path) =>
      times.set(
        path,
        await ctx.fs.stat(resolve(dir, path)).then(
          (stat) => stat.mtimeMs,
          () => -Infinity,
        ),
      ),
    ),
  )
  return [...paths].sort((a, b) => times.get(b)! - times.get(a)! || (a < b ? -1 : a > b ? 1 : 0))
}

/** Cuts a long line, saying so. */
export const cutLine = (line: string, max: number) =>
  line.length > max ? `${line.slice(0, max)} … [line cut: ${line.length - max} more characters]` : line

/** At most `max` items, then a note saying how many were left out and how to narrow. */
export function capped(items: string[], max: number, what: string, more?: string): string[] {
  if (items.length <= max) return more ? [...items, more] : items
  return [
    ...items.slice(0, max),
    `[Showing the first ${max} of ${items.length} ${what}. Narrow the pattern or the path to see the rest.]`,
  ]
}
