import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { CompositionError } from './errors.ts'
import type { Layer } from './compose.ts'
import { readPatchFile } from './patch-file.ts'

/** A profile: a named, ordered list of bundles (`dsh.profiles` in the launcher's package.json). */
export interface Profile {
  name: string
  description?: string
  bundles: string[]
}

export interface AppManifest {
  dir: string
  version: string
  profiles: Record<string, Profile>
}

/** Where the names a layer introduces are resolved from. */
export interface LayerSource {
  /** Directory that relative plugin paths (`./x.js`) resolve against. */
  dir: string
  /** The bundle's own importer, so bare names resolve from the bundle's dependencies. */
  bundle?: { name: string; importer: string }
}

export interface GatheredLayers {
  profile: Profile
  layers: Layer[]
  sources: LayerSource[]
}

export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.DSH_HOME ? resolve(env.DSH_HOME) : join(homedir(), '.dsh')
}

export function readAppManifest(dir: string): AppManifest {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const profiles: Record<string, Profile> = {}
  for (const [name, value] of Object.entries<any>(pkg.dsh?.profiles ?? {})) profiles[name] = { name, ...value }
  return { dir, version: pkg.version, profiles }
}

interface BundleInfo {
  name: string
  dir: string
  patch: string
  patches: Record<string, string>
  importer: string
}

function readBundle(app: AppManifest, name: string): BundleInfo {
  // A packaged launcher ships its bundles in `bundles/<name>/` (scripts/bundle-cli.mjs); a checkout's
  // launcher finds them as installed dependencies.
  let manifestPath = join(app.dir, 'bundles', name, 'package.json')
  if (!existsSync(manifestPath)) {
    try {
      manifestPath = createRequire(join(app.dir, 'package.json')).resolve(`${name}/package.json`)
    } catch {
      throw new CompositionError(`bundle "${name}" is not installed next to the launcher (${app.dir})`)
    }
  }
  const dir = dirname(manifestPath)
  const bundle = JSON.parse(readFileSync(manifestPath, 'utf8')).dsh?.bundle
  if (!bundle?.patch)
    throw new CompositionError(
      `package "${name}" is not a bundle: its package.json has no dsh.bundle.patch`,
      manifestPath,
    )
  const patches: Record<string, string> = {}
  for (const [key, file] of Object.entries<string>(bundle.patches ?? {})) patches[key] = join(dir, file)
  return { name, dir, patch: join(dir, bundle.patch), patches, importer: join(dir, bundle.import ?? 'import.js') }
}

/**
 * The layers of docs/architecture.md, "Composition", in order: each bundle of the profile, the home profile patch, the home patch, then
 * each `--patch`. A `--patch` argument without a path separator or YAML extension names a patch shipped by
 * one of the profile's bundles (e.g. `--patch minimal`).
 */
export function gatherLayers(
  app: AppManifest,
  profileName: string,
  home: string,
  patches: string[],
  cwd: string,
): GatheredLayers {
  const profile = app.profiles[profileName]
  if (!profile) {
    throw new CompositionError(
      `unknown profile "${profileName}" (expected one of: ${Object.keys(app.profiles).join(', ')})`,
    )
  }
  const layers: Layer[] = []
  const sources: LayerSource[] = []
  const bundles = profile.bundles.map((name) => readBundle(app, name))
  for (const bundle of bundles) {
    layers.push({ label: `bundle ${bundle.name}`, file: bundle.patch, items: readPatchFile(bundle.patch) })
    sources.push({ dir: bundle.dir, bundle: { name: bundle.name, importer: bundle.importer } })
  }
  const optional: [string, string][] = [
    [`profile ${profileName} (home)`, join(home, 'profiles', profileName, 'cordis.patch.yml')],
    ['home', join(home, 'cordis.patch.yml')],
  ]
  for (const [label, file] of optional) {
    if (!existsSync(file)) continue
    layers.push({ label, file, items: readPatchFile(file) })
    sources.push({ dir: dirname(file) })
  }
  for (const arg of patches) {
    const named = !/[\\/]/.test(arg) && !/\.ya?ml$/i.test(arg)
    let file: string
    if (named) {
      const owner = bundles.find((bundle) => bundle.patches[arg])
      if (!owner) {
        const known = bundles.flatMap((bundle) => Object.keys(bundle.patches))
        throw new CompositionError(
          `--patch ${arg}: no such file, and no bundle of profile "${profileName}" ships a patch named "${arg}"${known.length ? ` (named patches: ${known.join(', ')})` : ''}`,
        )
      }
      file = owner.patches[arg]!
    } else {
      file = isAbsolute(arg) ? arg : resolve(cwd, arg)
    }
    layers.push({ label: named ? `--patch ${arg}` : '--patch', file, items: readPatchFile(file) })
    sources.push({ dir: dirname(file) })
  }
  return { profile, layers, sources }
}
