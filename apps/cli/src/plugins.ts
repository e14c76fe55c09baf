import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { Document, isMap, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml'
import {
  findInstalledPlugin,
  installedNames,
  pluginsDirOf,
  readPluginDeclaration,
  type InstalledPlugin,
} from '@dsh/app-boot'
import { LauncherUsageError } from './args.ts'

/**
 * `dsh plugins add | list | remove | update` (issue #31 item 2; docs/extending.md, "Writing a dsh plugin"):
 * npm packages installed into `$DSH_HOME/plugins` (a package.json and lockfile of their own, exact versions,
 * install scripts never run), each with its row in the user's patch layer `$DSH_HOME/cordis.patch.yml`.
 * Runs before any tree boots, so a plugin that breaks boot can still be removed. A change takes effect at
 * the next start of dsh; nothing running is reloaded.
 */
export const PLUGINS_HELP = `dsh plugins — plugins from npm, installed into $DSH_HOME/plugins

  dsh plugins add <package>[@version] | <file.tgz>   install it (exact version, install scripts not run) and
                                                     add its row to $DSH_HOME/cordis.patch.yml
  dsh plugins list [--json]                          installed plugins, versions, whether their row is there
  dsh plugins remove <name>                          remove its rows and uninstall it
  dsh plugins update <name>[@version] | <file.tgz>   install another version of an installed plugin

A plugin runs with dsh's own authority. A change takes effect at the next start of dsh: a running
dsh web, acp, sdk or tui picks it up when restarted.
`

export interface PluginsIO {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  cwd: string
  home: string
  env: NodeJS.ProcessEnv
}

class PluginsError extends Error {}

const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/

/** `name`, `name@version`, `@scope/name@range`: the package name and what follows the `@`. */
function parseRegistrySpec(spec: string): { name: string; version?: string } {
  const at = spec.indexOf('@', 1)
  const name = at === -1 ? spec : spec.slice(0, at)
  const version = at === -1 ? undefined : spec.slice(at + 1)
  if (!NAME.test(name) || version === '' || (version !== undefined && !/^[\w.^~<>=| -]+$/.test(version)))
    throw new LauncherUsageError(
      `"${spec}" is not an npm package name with an optional @version, nor a path to a .tgz file`,
    )
  return version === undefined ? { name } : { name, version }
}

/**
 * A path (to a .tgz) rather than a registry name: it ends like a tarball, starts like a path, or has a slash
 * without being a scoped name (`user/repo`, which npm would take from GitHub, is a path here and refused).
 */
const isTarballArgument = (spec: string) =>
  /\.(tgz|tar\.gz)$/i.test(spec) ||
  spec.startsWith('.') ||
  isAbsolute(spec) ||
  (!spec.startsWith('@') && /[\\/]/.test(spec))

/** What npm is given: a registry spec as it is, a tarball as an absolute path (never a folder, a URL or git). */
function npmSpec(spec: string, cwd: string, dir: string): { arg: string; name?: string } {
  if (!isTarballArgument(spec)) {
    const parsed = parseRegistrySpec(spec)
    if (parsed.name.startsWith('@dsh/'))
      throw new PluginsError(`"${parsed.name}": the @dsh scope is dsh's own packages, not a plugin source`)
    return { arg: spec, name: parsed.name }
  }
  const file = isAbsolute(spec) ? spec : resolve(cwd, spec)
  if (!/\.(tgz|tar\.gz)$/i.test(file))
    throw new PluginsError(`${file}: a local plugin is given as a packed .tgz file (npm pack), not a folder`)
  if (!existsSync(file) || !statSync(file).isFile()) throw new PluginsError(`${file}: no such file`)
  // Kept in the plugins folder: package.json and the lockfile name it, and a later install reads it again.
  const kept = join(dir, 'tarballs', basename(file))
  mkdirSync(dirname(kept), { recursive: true })
  if (resolve(kept) !== resolve(file)) copyFileSync(file, kept)
  return { arg: `./tarballs/${basename(file)}` }
}

interface Manifest {
  dependencies?: Record<string, string>
}

function readManifest(dir: string): Manifest {
  const file = join(dir, 'package.json')
  if (!existsSync(file)) return {}
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new PluginsError(`${file}: not valid JSON (${(error as Error).message})`)
  }
}

function ensureFolder(dir: string): void {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'package.json')
  if (!existsSync(file))
    writeFileSync(
      file,
      JSON.stringify(
        {
          name: 'dsh-plugins',
          private: true,
          description: 'Plugins of dsh installed by `dsh plugins add`; edit with the dsh plugins commands.',
          dependencies: {},
        },
        null,
        2,
      ) + '\n',
    )
}

/**
 * Runs npm in the plugins folder. Install scripts never run (`--ignore-scripts`, also as the environment's
 * setting, so no .npmrc turns them back on), peer dependencies are not installed (`--legacy-peer-deps`: the
 * `@dsh/*` packages a plugin names as peers are dsh's own, never fetched), and versions are saved exact.
 */
function npm(dir: string, args: string[], env: NodeJS.ProcessEnv): void {
  const result = spawnSync(
    process.platform === 'win32' ? 'npm.cmd' : 'npm',
    [...args, '--ignore-scripts', '--legacy-peer-deps', '--no-audit', '--no-fund', '--save-exact'],
    {
      cwd: dir,
      encoding: 'utf8',
      env: { ...env, npm_config_ignore_scripts: 'true', npm_config_legacy_peer_deps: 'true' },
    },
  )
  if (result.error) throw new PluginsError(`npm could not be started: ${result.error.message}`)
  if (result.status !== 0)
    throw new PluginsError(
      `npm ${args.join(' ')} failed in ${dir} (exit ${result.status}):\n${(result.stderr || result.stdout).trim()}`,
    )
}

interface LockEntry {
  version?: string
  resolved?: string
  integrity?: string
}

function lockEntry(dir: string, name: string): LockEntry {
  const file = join(dir, 'package-lock.json')
  if (!existsSync(file)) return {}
  return JSON.parse(readFileSync(file, 'utf8')).packages?.[`node_modules/${name}`] ?? {}
}

/** The package.json inside a packed tarball (`package/package.json`), read without unpacking anything else. */
function tarballManifest(file: string): any {
  let data: Buffer
  try {
    data = gunzipSync(readFileSync(file))
  } catch (error) {
    throw new PluginsError(`${file}: not a gzipped tarball (${(error as Error).message})`, { cause: error })
  }
  for (let offset = 0; offset + 512 <= data.length;) {
    const header = data.subarray(offset, offset + 512)
    if (header.every((byte) => byte === 0)) break
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '')
    const path = (field(345, 155) ? `${field(345, 155)}/` : '') + field(0, 100)
    const size = parseInt(field(124, 12).trim() || '0', 8)
    if (/^[^/]+\/package\.json$/.test(path)) {
      try {
        return JSON.parse(data.subarray(offset + 512, offset + 512 + size).toString('utf8'))
      } catch (error) {
        throw new PluginsError(`${file}: its ${path} is not valid JSON`, { cause: error })
      }
    }
    offset += 512 + Math.ceil(size / 512) * 512
  }
  throw new PluginsError(`${file}: no package.json in the tarball (is it an npm pack output?)`)
}

/** The registry's manifest of `spec` (`npm view`), to check the declaration before anything is installed. */
function registryManifest(dir: string, spec: string, env: NodeJS.ProcessEnv): any {
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['view', spec, '--json'], {
    cwd: dir,
    encoding: 'utf8',
    env,
  })
  if (result.error) throw new PluginsError(`npm could not be started: ${result.error.message}`)
  if (result.status !== 0)
    throw new PluginsError(`npm view ${spec} failed (exit ${result.status}):\n${result.stderr.trim()}`)
  const parsed = JSON.parse(result.stdout)
  // A range matching several versions lists each: npm installs the highest, the last one listed.
  return Array.isArray(parsed) ? parsed.at(-1) : parsed
}

/** The version of `name` installed in the folder now, if any (read before an install replaces it). */
function versionOf(dir: string, name: string): string | undefined {
  const file = join(dir, 'node_modules', ...name.split('/'), 'package.json')
  return existsSync(file) ? String(JSON.parse(readFileSync(file, 'utf8')).version) : undefined
}

/** The user's patch layer as a yaml Document (comments kept); a file that is not a list of patch items is an error. */
function readLayer(file: string): Document {
  if (!existsSync(file)) return new Document([])
  const document = parseDocument(readFileSync(file, 'utf8'))
  if (document.errors.length) throw new PluginsError(`${file}: not valid YAML: ${document.errors[0]!.message}`)
  if (document.contents === null) {
    document.contents = document.createNode([]) as any
    return document
  }
  if (!isSeq(document.contents)) throw new PluginsError(`${file}: expected a list of patch items (- insert: [...])`)
  return document
}

function writeLayer(file: string, document: Document): void {
  mkdirSync(dirname(file), { recursive: true })
  const temporary = `${file}.${randomUUID()}.tmp`
  writeFileSync(temporary, document.toString())
  renameSync(temporary, file)
}

/** Every row map in the layer's `insert` lists (groups' children included), with the list that holds it. */
function rowsOf(document: Document): { row: YAMLMap; list: YAMLSeq; item: YAMLMap }[] {
  const out: { row: YAMLMap; list: YAMLSeq; item: YAMLMap }[] = []
  const walk = (list: unknown, item: YAMLMap) => {
    if (!isSeq(list)) return
    for (const row of list.items) {
      if (!isMap(row)) continue
      out.push({ row, list, item })
      walk(row.get('children', true), item)
    }
  }
  for (const item of (document.contents as YAMLSeq).items) if (isMap(item)) walk(item.get('insert', true), item)
  return out
}

const rowIdOf = (name: string) => `plugin-${name.replace(/^@/, '').replace(/[^A-Za-z0-9_.-]/g, '-')}`

/** Adds `- insert: [{ id, name }]` for the plugin unless a row of the layer already names it. */
function addRow(file: string, name: string, version: string): string | undefined {
  const document = readLayer(file)
  if (rowsOf(document).some(({ row }) => row.get('name') === name)) return undefined
  const taken = new Set(rowsOf(document).map(({ row }) => String(row.get('id'))))
  let id = rowIdOf(name)
  for (let n = 2; taken.has(id); n++) id = `${rowIdOf(name)}-${n}`
  const item = document.createNode({ insert: [{ id, name }] }) as YAMLMap
  item.commentBefore = ` dsh plugins add ${name}@${version}`
  ;(document.contents as YAMLSeq).items.push(item)
  writeLayer(file, document)
  return id
}

/** Removes every row of the layer naming the plugin (and an insert item left empty); the ids removed. */
function removeRows(file: string, name: string): string[] {
  if (!existsSync(file)) return []
  const document = readLayer(file)
  const removed: string[] = []
  for (const { row, list, item } of rowsOf(document).reverse()) {
    if (row.get('name') !== name) continue
    list.items.splice(list.items.indexOf(row), 1)
    removed.push(String(row.get('id')))
    const insert = item.get('insert', true)
    if (isSeq(insert) && insert.items.length === 0) {
      const items = (document.contents as YAMLSeq).items
      items.splice(items.indexOf(item), 1)
    }
  }
  if (removed.length) writeLayer(file, document)
  return removed.reverse()
}

/** The plugin `name` as installed, its declaration checked; undefined when the folder does not list it. */
function installed(dir: string, name: string): InstalledPlugin | undefined {
  try {
    return findInstalledPlugin(dir, name)
  } catch (error) {
    throw new PluginsError((error as Error).message)
  }
}

/**
 * Installs `spec`, finds which package it was, and checks its declaration; on a refusal the folder's
 * package.json and lockfile are put back and the package uninstalled (or its previous version reinstalled).
 */
function install(dir: string, spec: string, cwd: string, env: NodeJS.ProcessEnv, expect?: string) {
  ensureFolder(dir)
  const { arg, name: named } = npmSpec(spec, cwd, dir)
  const before = readManifest(dir).dependencies ?? {}
  const versionsBefore = new Map(Object.keys(before).map((key) => [key, versionOf(dir, key)]))
  const lockFile = join(dir, 'package-lock.json')
  const savedManifest = readFileSync(join(dir, 'package.json'), 'utf8')
  const savedLock = existsSync(lockFile) ? readFileSync(lockFile, 'utf8') : undefined
  // Checked before npm runs: a package that is not a plugin, or that would pull packages of dsh's own
  // scope from a registry, is refused with nothing installed.
  const preflight = named ? registryManifest(dir, spec, env) : tarballManifest(join(dir, arg))
  try {
    readPluginDeclaration(preflight, named ? `${spec} (npm view)` : `${spec} (package.json)`)
  } catch (error) {
    throw new PluginsError(`${(error as Error).message} (nothing installed)`, { cause: error })
  }
  npm(dir, ['install', arg], env)
  const after = readManifest(dir).dependencies ?? {}
  const name =
    named ??
    Object.keys(after).find((key) => after[key] !== before[key]) ??
    (expect && after[expect] ? expect : undefined)
  const undo = (problem: string): never => {
    if (name && !(name in before)) npm(dir, ['uninstall', name], env)
    writeFileSync(join(dir, 'package.json'), savedManifest)
    if (savedLock !== undefined) writeFileSync(lockFile, savedLock)
    // The version that was there before, as the restored lockfile records it.
    if (name && name in before) npm(dir, ['install'], env)
    throw new PluginsError(problem)
  }
  if (!name) return undo(`npm installed ${arg} but ${join(dir, 'package.json')} names no new package`)
  if (name.startsWith('@dsh/'))
    return undo(`"${name}": the @dsh scope is dsh's own packages, not a plugin source (nothing installed)`)
  if (expect && name !== expect) return undo(`${arg} is the package "${name}", not "${expect}" (nothing changed)`)
  let plugin: InstalledPlugin | undefined
  try {
    plugin = findInstalledPlugin(dir, name)
  } catch (error) {
    return undo(`${(error as Error).message} (nothing installed)`)
  }
  if (!plugin) return undo(`npm did not record "${name}" in ${join(dir, 'package.json')}`)
  return {
    plugin,
    previous: before[name] === undefined ? undefined : (versionsBefore.get(name) ?? before[name]),
    lock: lockEntry(dir, name),
  }
}

export async function pluginsCommand(argv: string[], io: PluginsIO): Promise<number> {
  const [, verb, ...rest] = argv
  const dir = pluginsDirOf(io.home)
  const layer = join(io.home, 'cordis.patch.yml')
  const out = (text: string) => io.stdout.write(text)
  const args = rest.filter((arg) => arg !== '--json')
  const json = rest.includes('--json')
  const unknownFlag = args.find((arg) => arg.startsWith('-'))
  try {
    if (unknownFlag) throw new LauncherUsageError(`dsh plugins ${verb}: unknown option ${unknownFlag}`)
    switch (verb) {
      case 'add': {
        if (args.length !== 1)
          throw new LauncherUsageError('dsh plugins add takes one <package>[@version] or <file.tgz>')
        const { plugin, previous, lock } = install(dir, args[0]!, io.cwd, io.env)
        const id = addRow(layer, plugin.name, plugin.version)
        out(
          [
            `${previous ? `replaced ${plugin.name}@${previous} with` : 'installed'} ${plugin.name}@${plugin.version} into ${dir}`,
            `  integrity ${lock.integrity ?? '(none recorded)'}${lock.resolved ? `\n  from ${lock.resolved}` : ''}`,
            `  provides ${plugin.declaration.provides.join(', ') || 'nothing'}; injects ${plugin.declaration.injects.join(', ') || 'nothing'}`,
            id ? `added row "${id}" to ${layer}` : `${layer} already has a row naming ${plugin.name}`,
            'the next start of dsh mounts it (a running dsh web, acp, sdk or tui picks it up when restarted).',
            'It runs with dsh\u2019s own authority: install only plugins you trust.',
            '',
          ].join('\n'),
        )
        return 0
      }
      case 'list': {
        if (args.length) throw new LauncherUsageError('dsh plugins list takes no arguments (--json)')
        const names = installedNames(dir)
        const layerRows = existsSync(layer) ? rowsOf(readLayer(layer)) : []
        const entries = names.map((name) => {
          const rows = layerRows.filter(({ row }) => row.get('name') === name).map(({ row }) => String(row.get('id')))
          try {
            const plugin = installed(dir, name)!
            return {
              name,
              version: plugin.version,
              rows,
              ...plugin.declaration,
              integrity: lockEntry(dir, name).integrity,
            }
          } catch (error) {
            return { name, rows, problem: (error as Error).message }
          }
        })
        if (json) out(JSON.stringify({ dir, layer, plugins: entries }, null, 2) + '\n')
        else if (!entries.length) out(`no plugins installed in ${dir} (dsh plugins add <package>)\n`)
        else
          for (const entry of entries)
            out(
              `${entry.name}${'version' in entry ? `@${entry.version}` : ''}  ${
                entry.rows.length ? `row ${entry.rows.join(', ')} in ${layer}` : `no row in ${layer}`
              }${'problem' in entry ? `\n  broken: ${entry.problem}` : ''}\n`,
            )
        return 0
      }
      case 'remove': {
        if (args.length !== 1) throw new LauncherUsageError('dsh plugins remove takes one <name>')
        const name = args[0]!
        const known = installedNames(dir)
        const removed = removeRows(layer, name)
        if (!known.includes(name) && !removed.length)
          throw new PluginsError(`no plugin named "${name}" (installed: ${known.join(', ') || 'none'})`)
        if (known.includes(name)) npm(dir, ['uninstall', name], io.env)
        out(
          `${removed.length ? `removed row ${removed.join(', ')} from ${layer}` : `no row named ${name} in ${layer}`}\n` +
            `${known.includes(name) ? `uninstalled ${name} from ${dir}` : `${name} was not installed in ${dir}`}\n` +
            'the next start of dsh runs without it (a running dsh keeps it until restarted).\n',
        )
        return 0
      }
      case 'update': {
        if (args.length !== 1 && args.length !== 2)
          throw new LauncherUsageError('dsh plugins update takes <name>[@version], or <name> <file.tgz>')
        const target = args.length === 2 ? args[1]! : args[0]!
        const name =
          args.length === 2 ? args[0]! : isTarballArgument(target) ? undefined : parseRegistrySpec(target).name
        if (name && !installedNames(dir).includes(name))
          throw new PluginsError(`"${name}" is not installed in ${dir} (dsh plugins add ${name})`)
        const spec = name && !isTarballArgument(target) && !target.slice(1).includes('@') ? `${name}@latest` : target
        const { plugin, previous, lock } = install(dir, spec, io.cwd, io.env, name)
        if (!previous) {
          npm(dir, ['uninstall', plugin.name], io.env)
          throw new PluginsError(`"${plugin.name}" was not installed: use dsh plugins add (nothing changed)`)
        }
        out(
          `updated ${plugin.name} ${previous} -> ${plugin.version} in ${dir}\n  integrity ${lock.integrity ?? '(none recorded)'}\n` +
            'the next start of dsh mounts this version (a running dsh keeps the old one until restarted).\n',
        )
        return 0
      }
      case 'help':
        out(PLUGINS_HELP)
        return 0
      case undefined:
        io.stderr.write(PLUGINS_HELP)
        return 2
      default:
        throw new LauncherUsageError(`dsh plugins: unknown command "${verb}" (add, list, remove, update)`)
    }
  } catch (error) {
    if (error instanceof PluginsError) {
      io.stderr.write(`dsh: ${error.message}\n`)
      return 1
    }
    throw error
  }
}
