// Builds the `dsh` launcher into a self-contained npm package folder (default apps/cli/pkg): the workspace
// packages bundled by rolldown into a few files, every plugin a lazily loaded chunk, the bundles' patch
// files beside it, the web app's build and the other files modules reach through `import.meta.url`.
// Native addons stay external and become the package's dependencies. Needs `pnpm build` and the web app
// build first (`npm run setup` does both). Usage: node scripts/bundle-cli.mjs [--out <dir>]
// See .agents/notes/implemented/decision/2026-12-01-bundled-launcher.md.
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'
import { parse as parseYaml } from 'yaml'
import { repo } from './lib.mjs'
import { INPUTS_FILE, launcherBundleIsFresh } from '../apps/cli/bin/freshness.js'

/** Packages that cannot be inlined: native addons, found at run time from the installed package. */
export const EXTERNAL = ['better-sqlite3', 'node-pty']
/**
 * Files and folders that bundled modules reach relative to their own `import.meta.url`, copied to the
 * same place relative to the output (each module's `import.meta.url` is rewritten to that place).
 */
const ASSETS = ['apps/web/dist', 'packages/sandbox/sandbox-local/bridge']

const cliDir = join(repo, 'apps/cli')
const requireFromCli = createRequire(join(cliDir, 'package.json'))
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

function fail(message) {
  console.error(`bundle-cli: ${message}`)
  process.exit(1)
}

/** Every bundle of every profile: its folder, manifest, patch files and the plugin names it can import. */
function bundlesOf(cli) {
  const names = [...new Set(Object.values(cli.dsh.profiles).flatMap((profile) => profile.bundles))]
  return names.map((name) => {
    const manifestPath = requireFromCli.resolve(`${name}/package.json`)
    const manifest = readJson(manifestPath)
    const dir = dirname(manifestPath)
    const patchFiles = [manifest.dsh.bundle.patch, ...Object.values(manifest.dsh.bundle.patches ?? {})]
    // A bundle's importer resolves its own dependencies; a patch row may only name one of them.
    const plugins = Object.keys(manifest.dependencies ?? {}).filter((dep) => !EXTERNAL.includes(dep))
    for (const file of patchFiles) {
      for (const plugin of pluginNamesIn(parseYaml(readFileSync(join(dir, file), 'utf8'), { customTags: [jsTag] }))) {
        if (!plugin.startsWith('.') && !plugins.includes(plugin))
          fail(`${name}/${file} names "${plugin}", which is not a dependency of ${name}`)
      }
    }
    return { name, dir, manifest, patchFiles, plugins }
  })
}

const jsTag = { tag: 'tag:yaml.org,2002:js', resolve: (source) => ({ __jsExpr: source }) }

function pluginNamesIn(node, out = []) {
  if (Array.isArray(node)) for (const item of node) pluginNamesIn(item, out)
  else if (node && typeof node === 'object') {
    if (typeof node.name === 'string') out.push(node.name)
    for (const value of Object.values(node)) pluginNamesIn(value, out)
  }
  return out
}

/** The generated entry modules: the launcher, and the table of every plugin as a lazy import. */
function virtualEntries(plugins) {
  const main = [
    `import { fileURLToPath } from 'node:url'`,
    `import { run } from '@dsh/cli'`,
    // The package root holds package.json (profiles), settings-keys.json and bundles/.
    `const code = await run(process.argv.slice(2), { appDir: fileURLToPath(new URL('..', import.meta.url)) })`,
    `process.exitCode = code`,
    // As apps/cli/src/bin.ts: a handle left open after the tree drained must not keep the process alive.
    `setTimeout(() => (process.stderr.write('dsh: a handle was still open 2 s after the end; exiting anyway\\n'), process.exit(code)), 2000).unref()`,
  ].join('\n')
  const table = plugins.map((name) => `  ${JSON.stringify(name)}: () => import(${JSON.stringify(name)}),`).join('\n')
  return { 'dsh:main': main, 'dsh:plugins': `export const plugins = {\n${table}\n}\n` }
}

/** Rolldown plugin: the virtual entries, and `import.meta.url` of repository modules pointing where their files are copied. */
function dshPlugin(entries, ownerOf, urlUsers) {
  return {
    name: 'dsh-bundle',
    async resolveId(id, importer) {
      if (id in entries) return `\0${id}`
      // The generated modules import workspace packages the way their owners do: the launcher from
      // apps/cli, a plugin from the bundle that depends on it.
      if (importer === '\0dsh:main') return this.resolve(id, join(cliDir, 'package.json'), { skipSelf: true })
      if (importer === '\0dsh:plugins')
        return this.resolve(id, join(ownerOf.get(id), 'package.json'), { skipSelf: true })
      return null
    },
    load: (id) => (id.startsWith('\0') && id.slice(1) in entries ? entries[id.slice(1)] : null),
    transform(code, id) {
      if (id.startsWith('\0')) return null
      // A CommonJS module inlined into an ES module chunk has no `__filename` or `__dirname` (write-file-atomic
      // hashes `__filename` into its temp names: grants.yaml could not be written by the bundled launcher). Each
      // gets its path at build time, declared inside the module's own CommonJS wrapper.
      const free = ['__filename', '__dirname'].filter(
        (name) => new RegExp(`\\b${name}\\b`).test(code) && !new RegExp(`\\b(var|let|const)\\s+${name}\\b`).test(code),
      )
      // An ES module has an import or export statement at the start of a line; words in strings (TypeScript's
      // messages say "export assignment") and names (`importFromModuleSpecifier`) do not make one.
      if (free.length && !/^[ \t]*(?:import\s*[{*'"]|import\s+[\w$]|export\s)/m.test(code)) {
        const values = { __filename: id, __dirname: dirname(id) }
        code = `${free.map((name) => `var ${name} = ${JSON.stringify(values[name])};`).join(' ')}\n${code}`
        if (!code.includes('import.meta.url')) return { code, map: null }
      }
      if (!code.includes('import.meta.url')) return null
      const rel = relative(repo, id)
      if (rel.startsWith('..') || rel.split('/').includes('node_modules')) {
        urlUsers.push(`${id} (third-party)`)
        return free.length ? { code, map: null } : null
      }
      urlUsers.push(rel)
      // Chunks sit in <out>/dist; this module's files are copied under <out>/dist/<its repository path>.
      return {
        code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(`./${rel}`)}, import.meta.url).href`),
        map: null,
      }
    },
  }
}

/** The package.json of the packed launcher: name `dsh`, the profiles, native addons as exact dependencies. */
function packageManifest(cli) {
  const dependencies = {}
  for (const name of EXTERNAL) dependencies[name] = installedVersion(name)
  const root = readJson(join(repo, 'package.json'))
  return {
    name: 'dsh',
    version: cli.version,
    description: 'dsh, a coding-agent harness: the bundled launcher (web, headless, SDK and ACP surfaces).',
    type: 'module',
    bin: { dsh: './bin/dsh.js' },
    engines: { node: root.engines.node },
    files: ['bin', 'dist', 'bundles', 'settings-keys.json', 'README.md'],
    dsh: { role: 'app', profiles: cli.dsh.profiles },
    dependencies,
  }
}

/** The version of a native addon the workspace is built and tested with (one version each, checked). */
function installedVersion(name) {
  return nativeUsers(name).version
}

/** The workspace packages that depend on a native addon, and the one exact version they pin. */
function nativeUsers(name) {
  const versions = new Set()
  const users = []
  const packages = join(repo, 'packages')
  for (const group of readdirSafe(packages)) {
    for (const pkg of readdirSafe(join(packages, group))) {
      const file = join(packages, group, pkg, 'package.json')
      if (!existsSync(file)) continue
      const spec = readJson(file).dependencies?.[name]
      if (spec) versions.add(spec)
      if (spec) users.push(join(packages, group, pkg))
    }
  }
  if (versions.size !== 1)
    fail(`expected one pinned version of ${name} in the workspace, found ${[...versions].join(', ') || 'none'}`)
  const [version] = versions
  if (!/^\d+\.\d+\.\d+$/.test(version)) fail(`${name} is not pinned to an exact version (${version})`)
  return { version, users }
}

/**
 * Links the workspace's built native addons into `<out>/node_modules`, so the folder runs in place (the
 * benchmark, a quick try); `npm pack` leaves node_modules out and an install builds its own.
 */
function linkNatives(out) {
  for (const name of EXTERNAL) {
    const [user] = nativeUsers(name).users
    const target = dirname(createRequire(join(user, 'package.json')).resolve(`${name}/package.json`))
    mkdirSync(join(out, 'node_modules'), { recursive: true })
    symlinkSync(target, join(out, 'node_modules', name), 'dir')
  }
}

function readdirSafe(dir) {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** Each bundle as the launcher reads it (`bundles/<name>/package.json`), its importer reading the plugin table. */
function writeBundles(bundles, out) {
  for (const bundle of bundles) {
    const dir = join(out, 'bundles', bundle.name)
    mkdirSync(dir, { recursive: true })
    for (const file of bundle.patchFiles) cpSync(join(bundle.dir, file), join(dir, file))
    const { name, version, type, dsh } = bundle.manifest
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ name, version, type, dsh: { ...dsh, bundle: { ...dsh.bundle, import: './import.js' } } }, null, 2)}\n`,
    )
    const toTable = relative(dir, join(out, 'dist/plugins.mjs'))
    writeFileSync(
      join(dir, 'import.js'),
      [
        `// Generated by scripts/bundle-cli.mjs: resolves this bundle's own dependencies from the bundled plugin table.`,
        `import { plugins } from ${JSON.stringify(`./${toTable}`)}`,
        `const own = new Set(${JSON.stringify(bundle.plugins)})`,
        `export default (name) => {`,
        `  if (!own.has(name)) return Promise.reject(Object.assign(new Error(\`Cannot find package '\${name}' in ${bundle.name}\`), { code: 'ERR_MODULE_NOT_FOUND' }))`,
        `  return plugins[name]()`,
        `}`,
        ``,
      ].join('\n'),
    )
  }
}

/** Every file under `dir`, recursively (an asset folder's files are inputs of the bundle). */
function filesIn(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

/**
 * The record `apps/cli/bin/freshness.js` checks: each file the bundle was made from (every module rolldown read,
 * the copied assets, patch files and manifests, this script) with its size and modification time.
 */
function writeInputs(out, moduleIds, bundles) {
  const files = new Set([
    // A third-party package changes only as a whole, by an install: its manifest stands for its files (a few
    // hundred stats fewer on every start).
    ...moduleIds
      .filter((id) => !id.startsWith('\0') && isAbsolute(id))
      .map((id) => id.replace(/(.*\/node_modules\/(?:@[^/]+\/)?[^/]+\/).*/, '$1package.json')),
    ...ASSETS.flatMap((asset) => filesIn(join(repo, asset))),
    ...bundles.flatMap((bundle) => [
      join(bundle.dir, 'package.json'),
      ...bundle.patchFiles.map((file) => join(bundle.dir, file)),
    ]),
    ...['package.json', 'settings-keys.json', 'README.md'].map((file) => join(cliDir, file)),
    fileURLToPath(import.meta.url),
  ])
  const inputs = {}
  for (const file of [...files].sort()) {
    const stat = statSync(file)
    inputs[file] = [stat.size, stat.mtimeMs]
  }
  writeFileSync(join(out, INPUTS_FILE), `${JSON.stringify({ inputs })}\n`)
  return files.size
}

/**
 * Builds the package folder at `out`. The folder is written beside it and swapped in by two renames, so a `dsh`
 * starting meanwhile finds the old folder or none (and then runs from dist: apps/cli/bin/dsh.js), never half of
 * one; the replaced folder is deleted by the next build, not this one, since a running `dsh` may still import a
 * plugin chunk from it.
 */
export async function bundleCli(out = join(cliDir, 'pkg')) {
  const started = Date.now()
  const cli = readJson(join(cliDir, 'package.json'))
  for (const asset of ASSETS)
    if (!existsSync(join(repo, asset))) fail(`${asset} is missing: run \`npm run setup\` first`)
  if (!existsSync(join(cliDir, 'dist/index.js'))) fail('apps/cli/dist is missing: run `pnpm build` first')
  const parent = dirname(out)
  const replacedPrefix = `.${basename(out)}.replaced-`
  mkdirSync(parent, { recursive: true })
  for (const name of readdirSync(parent))
    if (name.startsWith(replacedPrefix)) rmSync(join(parent, name), { recursive: true, force: true })
  const building = join(parent, `.${basename(out)}.building-${process.pid}`)
  rmSync(building, { recursive: true, force: true })
  const bundles = bundlesOf(cli)
  const plugins = [...new Set(bundles.flatMap((bundle) => bundle.plugins))].sort()
  const ownerOf = new Map(bundles.flatMap((bundle) => bundle.plugins.map((plugin) => [plugin, bundle.dir])))
  const urlUsers = []
  const build = await rolldown({
    input: { dsh: 'dsh:main', plugins: 'dsh:plugins' },
    platform: 'node',
    cwd: cliDir,
    external: (id) => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`)),
    plugins: [dshPlugin(virtualEntries(plugins), ownerOf, urlUsers)],
    logLevel: 'warn',
  })
  const written = await build.write({
    dir: join(building, 'dist'),
    format: 'esm',
    entryFileNames: '[name].mjs',
    chunkFileNames: '[name]-[hash].mjs',
    sourcemap: false,
  })
  await build.close()
  for (const asset of ASSETS) cpSync(join(repo, asset), join(building, 'dist', asset), { recursive: true })
  writeBundles(bundles, building)
  mkdirSync(join(building, 'bin'), { recursive: true })
  writeFileSync(join(building, 'bin/dsh.js'), `#!/usr/bin/env node\nimport '../dist/dsh.mjs'\n`, { mode: 0o755 })
  cpSync(join(cliDir, 'settings-keys.json'), join(building, 'settings-keys.json'))
  cpSync(join(cliDir, 'README.md'), join(building, 'README.md'))
  writeFileSync(join(building, 'package.json'), `${JSON.stringify(packageManifest(cli), null, 2)}\n`)
  linkNatives(building)
  const inputs = writeInputs(
    building,
    written.output.flatMap((chunk) => (chunk.type === 'chunk' ? chunk.moduleIds : [])),
    bundles,
  )
  if (existsSync(out)) renameSync(out, join(parent, `${replacedPrefix}${process.pid}`))
  renameSync(building, out)
  return { out, plugins: plugins.length, inputs, urlUsers, ms: Date.now() - started }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--out')
  const out = at > 0 ? resolve(process.argv[at + 1]) : join(cliDir, 'pkg')
  // `--if-stale` (npm run build, npm run setup): nothing to do when the folder was built from the files there are now.
  if (process.argv.includes('--if-stale')) {
    if (launcherBundleIsFresh(out)) process.exit(0)
    // `pnpm build` on a fresh clone runs before the web app is built: apps/cli/bin/dsh.js runs from dist until
    // `npm run setup` (or the next build) makes the bundle.
    const missing = [...ASSETS, 'apps/cli/dist/index.js'].filter((path) => !existsSync(join(repo, path)))
    if (missing.length) {
      console.error(
        `bundle-cli: not bundling the launcher yet (${missing.join(', ')} missing); bin/dsh.js runs from dist`,
      )
      process.exit(0)
    }
  }
  const result = await bundleCli(out)
  console.error(
    `bundle-cli: ${relative(process.cwd(), result.out) || '.'} (${result.plugins} plugins, ${result.inputs} input files) in ${result.ms} ms; import.meta.url rewritten in: ${result.urlUsers.join(', ')}`,
  )
}
