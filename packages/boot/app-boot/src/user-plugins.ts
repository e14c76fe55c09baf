import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { within } from '@dsh/sandbox-rules'

/**
 * Plugins installed from npm (`dsh plugins add`, issue #31 item 2): packages in `$DSH_HOME/plugins`, a folder
 * of its own with a package.json and lockfile that only the `dsh plugins` commands write. A row names such a
 * package by its bare name; boot finds it here after the profile's bundles. Nothing else is a plugin source:
 * not the workspace's node_modules, not a `.dsh/plugins` in a repository, not a parent folder's node_modules
 * (names are looked up in this folder's package.json, never by Node's walk up the tree).
 */
export const pluginsDirOf = (home: string) => join(home, 'plugins')

/** What a plugin package says about itself in package.json under `dsh.plugin`. */
export interface PluginDeclaration {
  /** Services the plugin provides (`ctx.set('webSearch', …)`); may be empty. */
  provides: string[]
  /** Services the plugin needs mounted before it applies: at least what its `inject` export names. */
  injects: string[]
}

export interface InstalledPlugin {
  name: string
  version: string
  dir: string
  /** The module boot imports: the package's `exports["."]` (import/default) or `main`, else index.js. */
  entry: string
  declaration: PluginDeclaration
}

const isNameList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string' && /^[A-Za-z_$][\w$.]*$/.test(item))

/**
 * The `dsh.plugin` declaration of a package manifest; a missing or malformed one is an error naming `file`
 * and the field. `@dsh/*` packages must be peerDependencies: dsh provides them, and an install must not
 * fetch a package of that name from a registry.
 */
export function readPluginDeclaration(manifest: any, file: string): PluginDeclaration {
  const plugin = manifest?.dsh?.plugin
  if (plugin === undefined)
    throw new Error(
      `${file}: not a dsh plugin: package.json has no "dsh.plugin" field (declare { "provides": [...], "injects": [...] })`,
    )
  if (!plugin || typeof plugin !== 'object' || Array.isArray(plugin))
    throw new Error(`${file}: "dsh.plugin" must be an object with "provides" and "injects"`)
  for (const key of ['provides', 'injects'] as const) {
    if (!isNameList(plugin[key]))
      throw new Error(`${file}: "dsh.plugin.${key}" must be a list of service names (use [] for none)`)
  }
  const unknown = Object.keys(plugin).filter((key) => key !== 'provides' && key !== 'injects')
  if (unknown.length) throw new Error(`${file}: "dsh.plugin" has unknown keys: ${unknown.join(', ')}`)
  for (const field of ['dependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) {
    const deps = manifest[field]
    const names = Array.isArray(deps) ? deps : Object.keys(deps ?? {})
    const own = names.filter((name: string) => name.startsWith('@dsh/'))
    if (own.length)
      throw new Error(
        `${file}: "${field}" lists ${own.join(', ')}: dsh provides its own packages, declare them in "peerDependencies"`,
      )
  }
  return { provides: plugin.provides, injects: plugin.injects }
}

function entryOf(manifest: any): string {
  let target: unknown = manifest.exports
  if (target && typeof target === 'object' && !Array.isArray(target) && '.' in target) target = (target as any)['.']
  while (target && typeof target === 'object' && !Array.isArray(target))
    target = (target as any).import ?? (target as any).default
  if (typeof target === 'string') return target
  return typeof manifest.main === 'string' ? manifest.main : 'index.js'
}

/** The names `$DSH_HOME/plugins/package.json` depends on: the installed plugins. */
export function installedNames(pluginsDir: string): string[] {
  const file = join(pluginsDir, 'package.json')
  if (!existsSync(file)) return []
  try {
    return Object.keys(JSON.parse(readFileSync(file, 'utf8')).dependencies ?? {})
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message})`, { cause: error })
  }
}

/**
 * The installed plugin `name`, or undefined when `$DSH_HOME/plugins` does not list it. A listed package that
 * is missing, lives outside the folder (a symlink out), or has no valid declaration is an error naming it.
 */
export function findInstalledPlugin(pluginsDir: string, name: string): InstalledPlugin | undefined {
  if (!installedNames(pluginsDir).includes(name)) return undefined
  const modules = join(pluginsDir, 'node_modules')
  const manifestFile = join(modules, ...name.split('/'), 'package.json')
  if (!existsSync(manifestFile))
    throw new Error(
      `plugin "${name}" is listed in ${join(pluginsDir, 'package.json')} but not installed (run dsh plugins update ${name})`,
    )
  const dir = realpathSync(join(modules, ...name.split('/')))
  if (!within(dir, realpathSync(modules)))
    throw new Error(`plugin "${name}" in ${modules} links outside the plugins folder (to ${dir}): refused`)
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'))
  const declaration = readPluginDeclaration(manifest, manifestFile)
  const entry = resolve(dir, entryOf(manifest))
  if (!within(entry, dir)) throw new Error(`${manifestFile}: its entry ${entry} is outside the package`)
  if (!existsSync(entry)) throw new Error(`${manifestFile}: its entry ${entry} does not exist`)
  return { name, version: String(manifest.version), dir, entry, declaration }
}
