// The directory picker of the web app's "new session" (DESIGN §10): browse folders inside one root.
import { readdir, realpath, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import type { DirectoryEntry, Methods } from '@dsh/web-protocol'
import { WebError } from '@dsh/webserver'

export interface Config {
  root: string
  showHidden: boolean
  maxEntries: number
}

export const Config: Schema<Config> = Schema.object({
  root: Schema.string().default('').description("The folder the picker may browse (empty: the user's home). Nothing outside it is listed."),
  showHidden: Schema.boolean().default(false).description('List folders whose names start with a dot.'),
  maxEntries: Schema.natural().min(1).default(1000).description('Folders listed per directory at most.'),
})

export const name = 'web-files'
export const inject = ['app', 'webserver']

const inside = (root: string, path: string) => {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/** Lists the folders of one directory inside the root (symlinks followed, but never out of the root). */
export async function listFolders(root: string, path: string, config: Pick<Config, 'showHidden' | 'maxEntries'>): Promise<{ path: string; parent?: string; entries: DirectoryEntry[] }> {
  let real: string
  try {
    real = await realpath(path)
  } catch {
    throw new WebError('NOT_FOUND', `${path} does not exist`)
  }
  if (!inside(root, real)) throw new WebError('BAD_PARAMS', `${path} is outside ${root}, the folder the picker may browse`)
  if (!(await stat(real)).isDirectory()) throw new WebError('BAD_PARAMS', `${path} is not a folder`)
  const entries: DirectoryEntry[] = []
  for (const entry of await readdir(real, { withFileTypes: true })) {
    if (!config.showHidden && entry.name.startsWith('.')) continue
    const full = join(real, entry.name)
    let folder = entry.isDirectory()
    if (entry.isSymbolicLink())
      folder = await realpath(full).then(
        async (target) => inside(root, target) && (await stat(target)).isDirectory(),
        () => false,
      )
    if (folder) entries.push({ name: entry.name, path: full, isDirectory: true })
  }
  entries.sort((a, b) => a.name.localeCompare(b.name))
  return { path: real, ...(real !== root ? { parent: dirname(real) } : {}), entries: entries.slice(0, config.maxEntries) }
}

export function apply(ctx: Context, config: Config) {
  type M<K extends keyof Methods> = Methods[K]
  ctx.webserver.method<M<'files.list'>['params'], M<'files.list'>['result']>(ctx, 'files.list', {
    handle: async ({ path }) => {
      const root = await realpath(config.root || homedir())
      const launch = await realpath(ctx.app.cwd).catch(() => root)
      const start = path ? resolve(root, path) : inside(root, launch) ? launch : root
      return { root, ...(await listFolders(root, start, config)) }
    },
  })
}
