import { pathToFileURL } from 'node:url'
import { isAbsolute, resolve } from 'node:path'
import { at } from './errors.ts'
import { walkRows, type Composition } from './compose.ts'
import type { LayerSource } from './layers.ts'

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
 * bundle claims: every bundle of the profile, then `extraImporters` (`ctx.app.resolvePlugin`). Only what the
 * install has can be found.
 */
export function bareNameResolver(
  sources: LayerSource[],
  extraImporters: string[] = [],
): (name: string) => Promise<unknown> {
  const chain = new ImporterChain()
  const order = [
    ...new Set([...sources.flatMap((source) => (source.bundle ? [source.bundle.importer] : [])), ...extraImporters]),
  ]
  return async (name) => {
    if (name.startsWith('.') || isAbsolute(name))
      throw new Error(`plugin "${name}" is a path: only an installed package can be resolved here`)
    const found = await chain.import(name, order)
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

/**
 * Resolves every row's `name` to its plugin, from the place of the layer that set the name: a relative path
 * from that layer's directory; a bare name from that layer's bundle first, then from every bundle of the
 * profile in order, then `extraImporters` (test support). Unknown names are errors at the line that set them.
 */
export async function resolvePlugins(
  composition: Composition,
  sources: LayerSource[],
  extraImporters: string[] = [],
): Promise<Map<string, any>> {
  const chain = new ImporterChain()
  const bundleImporters = sources.flatMap((source) => (source.bundle ? [source.bundle.importer] : []))
  const plugins = new Map<string, any>()
  for (const [row] of walkRows(composition.rows)) {
    if (row.children || !row.name || plugins.has(row.name)) continue
    const source = sources[row.nameLayer]!
    const origin = row.touches.findLast((touch) => touch.keys.includes('name') || touch.keys.includes('insert'))!.origin
    let exports: any
    let lastError: any
    if (row.name.startsWith('.') || isAbsolute(row.name)) {
      const file = isAbsolute(row.name) ? row.name : resolve(source.dir, row.name)
      try {
        exports = await import(pathToFileURL(file).href)
      } catch (error) {
        lastError = error
      }
    } else {
      const order = [
        ...new Set([...(source.bundle ? [source.bundle.importer] : []), ...bundleImporters, ...extraImporters]),
      ]
      const found = await chain.import(row.name, order)
      if ('exports' in found) exports = found.exports
      else lastError = found.error
    }
    if (!exports) {
      const why =
        lastError && !isNotFound(lastError, row.name)
          ? `plugin "${row.name}" failed to load: ${lastError?.message ?? lastError}`
          : `plugin "${row.name}" of row "${row.id}" cannot be found (is the package a dependency of a bundle of this profile?)`
      throw at(origin, why)
    }
    const plugin = unwrapPlugin(exports)
    if (!plugin || (typeof plugin !== 'function' && typeof plugin.apply !== 'function')) {
      throw at(
        origin,
        `module "${row.name}" of row "${row.id}" does not export a plugin (a class, a function, or an object with apply())`,
      )
    }
    plugins.set(row.name, plugin)
  }
  return plugins
}
