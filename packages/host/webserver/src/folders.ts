import { realpathSync, statSync } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { UsageError } from '@dsh/cmdline'
import { WebError } from './errors.ts'

/** `path` is `root` or below it (both already real). */
export const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/**
 * The folders a tab may browse and open a session in: the user's home, the folder dsh was started in, and
 * each `--allow-root` / `allowRoots` folder, all resolved through symlinks once at start. A tab is a
 * remote-controlled hand on this machine, so what it may open is a short, named list rather than the disk;
 * a path is checked after its own symlinks are resolved, so a link in the home pointing at /etc is refused.
 */
export class OpenableFolders {
  readonly home: string
  readonly roots: readonly string[]

  constructor(home: string, launchCwd: string, allowRoots: readonly string[]) {
    this.home = realOrThrow(home || homedir(), 'the home folder')
    const named = allowRoots.map((root) => realOrThrow(resolve(root), `--allow-root ${root}`))
    const launch = tryReal(launchCwd)
    const roots = [...new Set([this.home, ...(launch ? [launch] : []), ...named])]
    // A root inside another adds nothing; keep the outermost so a listing's root is the widest one.
    this.roots = roots.filter((root) => !roots.some((other) => other !== root && isInside(other, root)))
  }

  /** `~` and `~/x` name the home; a relative path is taken from the home. */
  expand(path: string): string {
    if (path === '~') return this.home
    if (path.startsWith('~/')) return join(this.home, path.slice(2))
    return resolve(this.home, path)
  }

  /** The root holding a real path, if any. */
  rootOf(real: string): string | undefined {
    return this.roots.find((root) => isInside(root, real))
  }

  /** Resolves `path` (symlinks included) to an existing folder inside a root, or throws one clear WebError. */
  async folder(path: string): Promise<{ real: string; root: string }> {
    const wanted = this.expand(path)
    let real: string
    try {
      real = await realpath(wanted)
    } catch {
      throw new WebError('NOT_FOUND', `${path} does not exist`)
    }
    const root = this.rootOf(real)
    if (!root)
      throw new WebError(
        'BAD_PARAMS',
        `${path}${real !== wanted ? ` (really ${real})` : ''} is outside the folders the web app may open (${this.roots.join(', ')}); start dsh with --allow-root <dir> to add one`,
      )
    if (!(await stat(real)).isDirectory()) throw new WebError('BAD_PARAMS', `${path} is not a folder`)
    return { real, root }
  }

  /**
   * The check of every method that names a workspace (`sessions.create`, `mcp.servers`; docs/security.md,
   * "Web host"): an absolute path to an existing folder inside a root, checked before anything in it is
   * read. Returns its real path; otherwise one clear BAD_PARAMS naming it.
   */
  async workspace(path: string): Promise<string> {
    if (!isAbsolute(path)) throw new WebError('BAD_PARAMS', `the workspace "${path}" is not an absolute path`)
    try {
      return (await this.folder(path)).real
    } catch (error) {
      throw error instanceof WebError && error.code === 'NOT_FOUND'
        ? new WebError('BAD_PARAMS', `the workspace "${path}" is not an existing directory`)
        : error
    }
  }
}

function realOrThrow(path: string, what: string): string {
  try {
    const real = realpathSync(path)
    if (!statSync(real).isDirectory()) throw new UsageError(`${what}: ${path} is not a folder`)
    return real
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(`${what}: ${path} does not exist`)
  }
}

function tryReal(path: string): string | undefined {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}
