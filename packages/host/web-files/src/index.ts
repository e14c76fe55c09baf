// The directory picker of the web app's "new session" (docs/architecture.md, "Surfaces"): browse folders inside the openable roots
// (`ctx.webserver.folders`: the home, the launch folder, `--allow-root`).
import { lstat, readdir, realpath, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import type { DirectoryEntry, Methods } from '@dsh/web-protocol'
import type { OpenableFolders } from '@dsh/webserver'

export interface Config {
  showHidden: boolean
  maxEntries: number
}

export const Config: Schema<Config> = Schema.object({
  showHidden: Schema.boolean().default(false).description('List folders whose names start with a dot.'),
  maxEntries: Schema.natural().min(1).default(1000).description('Folders listed per directory at most.'),
})

export const name = 'web-files'
export const inject = ['app', 'webserver']

/** Lists the folders of one directory inside an openable root (symlinks followed, but never out of every root). */
export async function listFolders(
  folders: OpenableFolders,
  path: string,
  config: Pick<Config, 'showHidden' | 'maxEntries'>,
): Promise<{ path: string; root: string; parent?: string; entries: DirectoryEntry[] }> {
  const { real, root } = await folders.folder(path)
  const entries: DirectoryEntry[] = []
  for (const entry of await readdir(real, { withFileTypes: true })) {
    if (!config.showHidden && entry.name.startsWith('.')) continue
    const full = join(real, entry.name)
    let folder = entry.isDirectory()
    if (entry.isSymbolicLink())
      folder = await realpath(full).then(
        async (target) => folders.rootOf(target) !== undefined && (await stat(target)).isDirectory(),
        () => false,
      )
    if (folder) entries.push({ name: entry.name, path: full, isDirectory: true })
  }
  entries.sort((a, b) => a.name.localeCompare(b.name))
  const shown = entries.slice(0, config.maxEntries)
  // A repository is marked by its `.git` (a folder, or a file in a worktree or submodule), not followed.
  await Promise.all(
    shown.map(async (entry) => {
      if (
        await lstat(join(entry.path, '.git')).then(
          () => true,
          () => false,
        )
      )
        entry.git = true
    }),
  )
  return { path: real, root, ...(real !== root ? { parent: dirname(real) } : {}), entries: shown }
}

export function apply(ctx: Context, config: Config) {
  type M<K extends keyof Methods> = Methods[K]
  const folders = ctx.webserver.folders
  ctx.webserver.method<M<'files.list'>['params'], M<'files.list'>['result']>(ctx, 'files.list', {
    handle: async ({ path }) => {
      const launch = await realpath(ctx.app.cwd).catch(() => folders.home)
      const start = path || (folders.rootOf(launch) ? launch : folders.home)
      return { home: folders.home, roots: [...folders.roots], ...(await listFolders(folders, start, config)) }
    },
  })
}
