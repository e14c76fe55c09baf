import { pathToFileURL } from 'node:url'
import { isAbsolute, resolve } from 'node:path'
import { at } from './errors.ts'
import { walkRows, type Composition } from './compose.ts'
import type { LayerSource } from './layers.ts'
import { findInstalledPlugin, type InstalledPlugin } from './user-plugins.ts'

type Importer = (specifier: string) => Promise<any>

/** Whether `error` says this specifier's package (not something it imports) is missing from the importer. */
function isNotFound(error: any, specifier: string): boolean {
  const text = String(error?.message ?? '')
  const parts = specifier.split('/')
  const pkg = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
  const quoted = [specifier, pkg].some((name) => text.includes(`'${name}'`) || text.includes(`"${name}"`))
  return (
    (error?.code === 'ERR_MODULE_NOT_FOUND' || /cannot find (module|package)|failed to (load|resolve)/i.test(text)) &&
    quoted
  )
}

/** The plugin a module exports, the way the loader unwraps it: `default`, else the module itself. */
export function unwrapPlugin(exports: any): any {
  const value = exports?.default ?? exports
  return value?.__esModule ? (value.default ?? value) : value
}

/** Imports bare names through importer modules in order, each module loaded once. */
class ImporterChain {
  private readonly importers = new Map<string, Importer>()

  private async importerOf(file: string): Promise<Importer> {
    let importer = this.importers.get(file)
    if (!importer) {
      importer = unwrapPlugin(await import(pathToFileURL(file).href)) as Importer
      this.importers.set(file, importer)
    }
    return importer
  }

  /** The module of the first importer that has `name`; `{ error }` when none does (or one failed to load it). */
  async import(name: string, order: string[]): Promise<{ exports: any } | { error: any }> {
    let lastError: any
    for (const file of order) {
      try {
        return { exports: await (await this.importerOf(file))(name) }
      } catch (error) {
        lastError = error
        if (!isNotFound(error, name)) break
      }
    }
    return { error: lastError }
  }
}

/**
 * A resolver of bare package names after boot, in the order composition uses for a bare name no layer's own
 * bundle claims: every bundle of the profile, then `$DSH_HOME/plugins` (`pluginsDir`), then `extraImporters`
 * (`ctx.app.resolvePlugin`). Only what the
 * install has can be found.
 */
export function bareNameResolver(
  sources: LayerSource[],
  extraImporters: string[] = [],
  pluginsDir?: string,
): (name: string) => Promise<unknown> {
  const chain = new ImporterChain()
  const order = [...new Set(sources.flatMap((source) => (source.bundle ? [source.bundle.importer] : [])))]
  return async (name) => {
    if (name.startsWith('.') || isAbsolute(name))
      throw new Error(`plugin "${name}" is a path: only an installed package can be resolved here`)
    let found = await chain.import(name, order)
    const installed =
      'error' in found && (!found.error || isNotFound(found.error, name)) && pluginsDir
        ? findInstalledPlugin(pluginsDir, name)
        : undefined
    if (installed) found = { exports: await import(pathToFileURL(installed.entry).href) }
    if ('error' in found && (!found.error || isNotFound(found.error, name)) && extraImporters.length)
      found = await chain.import(name, extraImporters)
    if ('error' in found) {
      throw new Error(
        found.error && !isNotFound(found.error, name)
          ? `plugin "${name}" failed to load: ${found.error?.message ?? found.error}`
          : `plugin "${name}" cannot be found (no bundle of this profile has it)`,
      )
    }
    const plugin = unwrapPlugin(found.exports)
    if (!plugin || (typeof plugin !== 'function' && typeof plugin.apply !== 'function'))
      throw new Error(`module "${name}" does not export a plugin`)
    return plugin
  }
}

/** A row whose installed plugin did not load: boot goes on without it and reports `problem` (file:line). */
export interface PluginLoadFailure {
  rowIds: string[]
  name: string
  problem: string
  cause?: unknown
}

export interface ResolvedPlugins {
  plugins: Map<string, any>
  /** The plugins that came from `$DSH_HOME/plugins`, by name. */
  installed: Map<string, InstalledPlugin>
  /** Installed plugins that threw at load or contradict their declaration: their rows are not mounted. */
  failures: PluginLoadFailure[]
}

/** Services a plugin's `inject` export names (a list, or an object of name to options; `?` marks optional). */
function injectedNames(plugin: any): string[] {
  const inject = plugin?.inject
  const names = Array.isArray(inject) ? inject : inject && typeof inject === 'object' ? Object.keys(inject) : []
  return names.map((name: unknown) => String(name).replace(/\?$/, ''))
}

/**
 * Resolves every row's `name` to its plugin, from the place of the layer that set the name: a relative path
 * from that layer's directory; a bare name from that layer's bundle first, then from every bundle of the
 * profile in order, then from `$DSH_HOME/plugins` (`pluginsDir`, what `dsh plugins add` installed), then
 * `extraImporters` (test support). Unknown names are errors at the line that set them. An installed plugin
 * that throws while its module loads, or injects a service its declaration does not name, is a located
 * failure of its rows alone: the rest of the tree still boots.
 */
export async function resolvePlugins(
  composition: Composition,
  sources: LayerSource[],
  extraImporters: string[] = [],
  pluginsDir?: string,
): Promise<ResolvedPlugins> {
  const chain = new ImporterChain()
  const bundleImporters = sources.flatMap((source) => (source.bundle ? [source.bundle.importer] : []))
  const plugins = new Map<string, any>()
  const installed = new Map<string, InstalledPlugin>()
  const failed = new Map<string, PluginLoadFailure>()
  for (const [row] of walkRows(composition.rows)) {
    if (row.children || !row.name) continue
    if (failed.has(row.name)) {
      failed.get(row.name)!.rowIds.push(row.id)
      continue
    }
    if (plugins.has(row.name)) continue
    const source = sources[row.nameLayer]!
    const origin = row.touches.findLast((touch) => touch.keys.includes('name') || touch.keys.includes('insert'))!.origin
    let exports: any
    let lastError: any
    let fromHome: InstalledPlugin | undefined
    if (row.name.startsWith('.') || isAbsolute(row.name)) {
      const file = isAbsolute(row.name) ? row.name : resolve(source.dir, row.name)
      try {
        exports = await import(pathToFileURL(file).href)
      } catch (error) {
        lastError = error
      }
    } else {
      const order = [...new Set([...(source.bundle ? [source.bundle.importer] : []), ...bundleImporters])]
      let found = await chain.import(row.name, order)
      if ('error' in found && (!found.error || isNotFound(found.error, row.name)) && pluginsDir) {
        try {
          fromHome = findInstalledPlugin(pluginsDir, row.name)
        } catch (error) {
          throw at(origin, `row "${row.id}": ${(error as Error).message}`)
        }
        if (fromHome) {
          try {
            found = { exports: await import(pathToFileURL(fromHome.entry).href) }
          } catch (error) {
            const why = error instanceof Error ? error.message : String(error)
            failed.set(row.name, {
              rowIds: [row.id],
              name: row.name,
              problem: `${origin.file}:${origin.line}: plugin "${row.name}" ${fromHome.version} of row "${row.id}" threw while loading ${fromHome.entry}: ${why}`,
              cause: error,
            })
            continue
          }
        }
      }
      if ('error' in found && (!found.error || isNotFound(found.error, row.name)) && extraImporters.length)
        found = await chain.import(row.name, extraImporters)
      if ('exports' in found) exports = found.exports
      else lastError = found.error
    }
    if (!exports) {
      const why =
        lastError && !isNotFound(lastError, row.name)
          ? `plugin "${row.name}" failed to load: ${lastError?.message ?? lastError}`
          : pluginsDir && !row.name.startsWith('@dsh/')
            ? `plugin "${row.name}" of row "${row.id}" is not installed: no bundle of this profile has it and ${pluginsDir} does not (dsh plugins add ${row.name}; a workspace's node_modules is never a plugin source)`
            : `plugin "${row.name}" of row "${row.id}" cannot be found (is the package a dependency of a bundle of this profile?)`
      throw at(origin, why)
    }
    const plugin = unwrapPlugin(exports)
    if (!plugin || (typeof plugin !== 'function' && typeof plugin.apply !== 'function')) {
      const problem = `module "${row.name}" of row "${row.id}" does not export a plugin (a class, a function, or an object with apply())`
      if (!fromHome) throw at(origin, problem)
      failed.set(row.name, {
        rowIds: [row.id],
        name: row.name,
        problem: `${origin.file}:${origin.line}: ${problem} (${fromHome.entry})`,
      })
      continue
    }
    if (fromHome) {
      const undeclared = injectedNames(plugin).filter((name) => !fromHome.declaration.injects.includes(name))
      if (undeclared.length) {
        failed.set(row.name, {
          rowIds: [row.id],
          name: row.name,
          problem: `${origin.file}:${origin.line}: plugin "${row.name}" of row "${row.id}" injects ${undeclared.join(', ')}, which its package.json "dsh.plugin.injects" does not declare (${fromHome.entry})`,
        })
        continue
      }
      installed.set(row.name, fromHome)
    }
    plugins.set(row.name, plugin)
  }
  return { plugins, installed, failures: [...failed.values()] }
}
