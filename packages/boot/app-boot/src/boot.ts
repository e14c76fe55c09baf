import { pathToFileURL } from 'node:url'
import { Context, FIBER_STATE } from '@dsh/cordis'
import { deferJs, mountLoader, toEntryOptions, type HostRow, type LoaderHost } from '@dsh/cordis-loader'
import { REPORTED_BY_LAUNCHER, type AppInfo, type LaunchStdio } from '@dsh/app'
import { compose, walkRows, type ComposedRow, type Composition } from './compose.ts'
import { dumpComposition, llmRows, requestCheckMarks } from './dump.ts'
import { defaultHome, gatherLayers, readAppManifest, type LayerSource, type Profile } from './layers.ts'
import { mapJs } from './js-expr.ts'
import { bareNameResolver, resolvePlugins } from './resolve.ts'
import { validateConfigs } from './validate.ts'
import { pluginsDirOf } from './user-plugins.ts'

export interface ComposeOptions {
  /** The launcher's package directory: its package.json lists the profiles, its dependencies the bundles. */
  appDir: string
  profile: string
  /** `--patch` arguments in order: files, or names of patches shipped by the profile's bundles. */
  patches?: string[]
  home?: string
  cwd?: string
}

export interface BootOptions extends ComposeOptions {
  /** Arguments for the tree (`ctx.cmdlineArgs`). */
  argv?: string[]
  /** More importer modules (`(name) => import(name)`) for bare names no bundle resolves: test support. */
  extraImporters?: string[]
  /** Called when a surface asks to end the process (`ctx.app.requestExit`). */
  onExitRequest?: (code: number) => void
  /** The launch's standard streams (`ctx.app.stdio`); the process's own when absent. */
  stdio?: LaunchStdio
}

export interface ComposedProfile {
  profile: Profile
  composition: Composition
  sources: LayerSource[]
  home: string
  version: string
  dump(): string
}

/** Gathers and composes the layers of a profile without booting it (what `--dump-config` prints). */
export function composeProfile(options: ComposeOptions): ComposedProfile {
  const app = readAppManifest(options.appDir)
  const home = options.home ?? defaultHome()
  const cwd = options.cwd ?? process.cwd()
  const { profile, layers, sources } = gatherLayers(app, options.profile, home, options.patches ?? [], cwd)
  const composition = compose(layers)
  const dump = () =>
    dumpComposition(composition, [
      `dsh ${app.version} · profile ${profile.name} · home ${home}`,
      ...requestCheckMarks(composition),
    ])
  return { profile, composition, sources, home, version: app.version, dump }
}

/** A row that did not become active, and why. */
export interface RowFailure {
  id: string
  name: string
  problem: string
  /** The error a plugin threw, when there was one. */
  cause?: unknown
}

/** Something went wrong while mounting rows (a plugin threw, a service never came): exit 1, not 2. */
export class BootError extends Error {
  override name = 'BootError'
  constructor(readonly failures: RowFailure[]) {
    super(
      `the plugin tree did not boot:\n${failures.map((f) => `  row "${f.id}" (${f.name}): ${f.problem}`).join('\n')}`,
    )
  }

  /**
   * A user mistake (exit 2): a plugin rejected a file the user wrote (the error names the file) or a flag
   * the user gave (a `UsageError` from `ctx.cmdlineArgs`).
   */
  get isUserError(): boolean {
    return this.failures.every(
      (failure) => typeof (failure.cause as any)?.file === 'string' || (failure.cause as any)?.name === 'UsageError',
    )
  }
}

export interface BootedTree extends ComposedProfile {
  root: Context
  loader: LoaderHost
  /** Disposes the whole tree: every plugin's effects are undone. Idempotent. */
  stop(): Promise<void>
  /** Rows of plugins installed from npm that threw at load or while applying: not mounted, the rest booted. */
  pluginFailures: RowFailure[]
}

function toHostRow(row: ComposedRow, skipped: Set<string>): HostRow {
  const convert = (value: unknown) => mapJs(value, (expr) => deferJs(expr.source))
  const host: HostRow = { id: row.id, name: row.name ?? 'group' }
  if (row.config !== undefined) host.config = convert(row.config)
  if (skipped.has(row.id)) host.disabled = true
  else if (row.disabled !== undefined) host.disabled = convert(row.disabled)
  if (row.inject !== undefined) host.inject = row.inject
  if (row.isolate !== undefined) host.isolate = row.isolate
  if (row.children) host.children = row.children.map((child) => toHostRow(child, skipped))
  return host
}

/**
 * Boots a profile: compose, resolve and validate every row, then mount the tree on an empty root and wait
 * until it settles. Throws CompositionError for user mistakes (exit 2) and BootError for rows that failed.
 */
export async function bootTree(options: BootOptions): Promise<BootedTree> {
  const composed = composeProfile(options)
  const pluginsDir = pluginsDirOf(composed.home)
  const resolved = await resolvePlugins(composed.composition, composed.sources, options.extraImporters, pluginsDir)
  const { plugins } = resolved
  const skipped = new Set(resolved.failures.flatMap((failure) => failure.rowIds))
  validateConfigs(composed.composition, plugins)

  const root = new Context()
  // Cordis reports a plugin that throws while applying through its logger, with the fiber: keep the first
  // error of each row so the boot failure says why, not just that.
  const errors = new Map<string, unknown>()
  const captureErrors = (root as any).logger.exporter({
    export(message: { type: string; args: unknown[]; fiber?: WeakRef<any> }) {
      if (message.type !== 'error') return
      const id = (root as any).loader?.locate?.(message.fiber?.deref()) ?? 'unknown'
      const error = message.args.find((arg) => arg instanceof Error)
      if (error) (error as any)[REPORTED_BY_LAUNCHER] = true // registered first: later exporters see the mark
      if (!errors.has(id)) errors.set(id, error ?? message.args.map(String).join(' '))
    },
  })
  root.on('internal/error' as any, (error: any) => {
    const id = (root as any).loader?.locate?.() ?? 'unknown'
    if (!errors.has(id)) errors.set(id, error)
  })
  const info: AppInfo = {
    version: composed.version,
    profile: composed.profile.name,
    home: composed.home,
    cwd: options.cwd ?? process.cwd(),
    argv: options.argv ?? [],
    stdio: options.stdio ?? { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
    dumpConfig: composed.dump,
    requestExit: (code) => options.onExitRequest?.(code),
    resolvePlugin: bareNameResolver(composed.sources, options.extraImporters, pluginsDir),
  }
  ;(root as any).reflect.provide('app', info)

  const loader = await mountLoader(root, {
    baseUrl: pathToFileURL(options.appDir + '/').href,
    resolve: async (name) => {
      const plugin = plugins.get(name)
      if (!plugin) throw new Error(`plugin "${name}" was not resolved at composition`)
      return plugin
    },
  })
  let stopped: Promise<void> | undefined
  const stop = () => (stopped ??= loader.ctx.fiber.dispose())
  await loader.root.update(composed.composition.rows.map((row) => toEntryOptions(toHostRow(row, skipped))))
  await loader.await()

  // A plugin installed from npm that threw (at load or while applying) costs its own rows only: the rest of
  // the tree boots and the failure is reported with the row's layer line and the plugin's file.
  const pluginFailures: RowFailure[] = resolved.failures.flatMap((failure) =>
    failure.rowIds.map((id) => ({ id, name: failure.name, problem: failure.problem, cause: failure.cause })),
  )
  const waits = (failure: RowFailure) => failure.cause === undefined && failure.problem.startsWith('waits for services')
  const listed = listFailures(composed.composition, loader, errors)
  const others = listed.filter((failure) => !resolved.installed.has(failure.name))
  for (const failure of listed.filter((candidate) => resolved.installed.has(candidate.name))) {
    const installed = resolved.installed.get(failure.name)!
    const row = [...walkRows(composed.composition.rows)].find(([candidate]) => candidate.id === failure.id)?.[0]
    const origin = row?.touches.findLast(
      (touch) => touch.keys.includes('name') || touch.keys.includes('insert'),
    )?.origin
    const what = waits(failure)
      ? failure.problem
      : failure.cause !== undefined
        ? `threw while applying (${installed.entry}): ${failure.problem}`
        : `${failure.problem} (${installed.entry})`
    pluginFailures.push({
      ...failure,
      problem: `${origin ? `${origin.file}:${origin.line}: ` : ''}plugin "${failure.name}" ${installed.version} of row "${failure.id}" ${what}`,
    })
  }
  // Rows that only wait for a service of a row that failed are consequences: report the causes alone. When
  // the only causes are installed plugins that failed, the rows waiting are reported with them, not fatal.
  const causes = others.filter((failure) => !waits(failure))
  let failures: RowFailure[] = causes.length ? causes : others
  if (!causes.length && others.length && pluginFailures.length) {
    pluginFailures.push(
      ...others.map((failure) => ({
        ...failure,
        problem: `row "${failure.id}" (${failure.name}) is not mounted: it ${failure.problem} (an installed plugin that failed may be the one that provides it)`,
      })),
    )
    failures = []
  }
  captureErrors()
  if (!failures.length) failures.push(...uncheckedModel(composed.composition, root))
  if (failures.length) {
    await stop()
    throw new BootError(failures)
  }
  return { ...composed, root, loader, stop, pluginFailures }
}

/**
 * A tree whose model registry has no request check mounted (no `@dsh/invariants`) refuses to boot, unless
 * its llm row says `unchecked: true` (docs/architecture.md, "The session log").
 */
function uncheckedModel(composition: Composition, root: Context): RowFailure[] {
  const llm = (root as any).get('llm')
  if (!llm || llm.guarded || llm.config?.unchecked) return []
  const row = llmRows(composition)[0]
  return [
    {
      id: row?.id ?? 'llm',
      name: row?.name ?? '@dsh/llm',
      problem:
        "no request check is mounted: mount @dsh/invariants (a row `name: '@dsh/invariants'`), or set `config: { unchecked: true }` on this row to send requests unchecked",
    },
  ]
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

function listFailures(composition: Composition, loader: LoaderHost, errors: Map<string, unknown>): RowFailure[] {
  const failures: RowFailure[] = []
  for (const [row] of walkRows(composition.rows)) {
    if (row.children) continue
    const entry = (loader as any).store[row.id]
    const name = row.name ?? 'group'
    if (!entry || entry.disabled) continue
    const fiber = entry.fiber
    const error = errors.get(row.id)
    if (error !== undefined) failures.push({ id: row.id, name, problem: describe(error), cause: error })
    else if (!fiber) failures.push({ id: row.id, name, problem: 'plugin was not applied' })
    else if (fiber.state === FIBER_STATE.FAILED)
      failures.push({
        id: row.id,
        name,
        problem: `plugin failed to apply${errors.has('unknown') ? `: ${describe(errors.get('unknown'))}` : ''}`,
      })
    else if (fiber.state === FIBER_STATE.PENDING) {
      const missing = Object.entries<any>(fiber.inject ?? {})
        .filter(([key, spec]) => spec?.required !== false && fiber.parent.get(key) === undefined)
        .map(([key]) => key)
      failures.push({
        id: row.id,
        name,
        problem: `waits for services no mounted row provides: ${missing.join(', ') || '(unknown)'}`,
      })
    }
  }
  return failures
}
