import { Context, type Plugin } from '@dsh/cordis'
import { Entry, Loader, Group, evaluate } from '@cordisjs/plugin-loader'

/** Resolves a row's `name` to its plugin. The app decides where names resolve from, never the loader's own URL. */
export type PluginResolver = (name: string) => Promise<Plugin>

export interface LoaderHostOptions {
  /** Base URL for relative plugin names (set on the root context: upstream rc.0 leaves it undefined). */
  baseUrl: string
  resolve: PluginResolver
}

export type LoaderHost = Loader<Context>

/**
 * Marker key for a `!!js` expression handed to the loader. Upstream evaluates `__jsExpr` when the fiber is
 * created, before its injections are ready; we rename the key so upstream passes it through untouched and
 * evaluate it ourselves inside a deferred wrapper once the row's injections are ready.
 */
export const DEFERRED_JS = '__dshJs'

export function deferJs(expression: string): Record<string, string> {
  return { [DEFERRED_JS]: expression }
}

function isDeferred(value: unknown): value is Record<typeof DEFERRED_JS, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as any)[DEFERRED_JS] === 'string'
  )
}

export function containsDeferred(value: unknown): boolean {
  if (isDeferred(value)) return true
  if (Array.isArray(value)) return value.some(containsDeferred)
  if (value && typeof value === 'object') return Object.values(value).some(containsDeferred)
  return false
}

function interpolateDeferred(ctx: Context, value: unknown): unknown {
  if (isDeferred(value)) return evaluate(ctx, value[DEFERRED_JS])
  if (Array.isArray(value)) return value.map((item) => interpolateDeferred(ctx, item))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateDeferred(ctx, v)]))
  }
  return value
}

/**
 * A plugin wrapping `inner` whose row carries `!!js`: it waits for the union of the inner plugin's and the
 * row's injections, evaluates `disabled` and `config` in its own context, then applies the inner plugin
 * as its child (so disposing the row disposes it).
 */
function deferredPlugin(inner: any): Plugin {
  const wrapper = {
    name: `${inner?.name || 'plugin'}(deferred)`,
    inject: inner?.inject,
    apply(ctx: Context, held: { config?: unknown; disabled?: unknown }) {
      if (held.disabled !== undefined && interpolateDeferred(ctx, held.disabled)) return
      ctx.plugin(inner, interpolateDeferred(ctx, held.config) as any)
    },
  }
  return wrapper as Plugin
}

const DEFERRED_PREFIX = 'deferred:'

/** A row as the app composes it; `children` makes it a group. Expressions are already `deferJs` markers. */
export interface HostRow {
  id: string
  name: string
  config?: unknown
  disabled?: unknown
  inject?: unknown
  isolate?: Record<string, true | string>
  children?: HostRow[]
}

/** Converts app rows to upstream entry options; rows holding expressions become deferred wrappers. */
export function toEntryOptions(row: HostRow): any {
  const base: any = { id: row.id, name: row.name }
  if (row.inject !== undefined) base.inject = row.inject
  if (row.isolate !== undefined) base.isolate = row.isolate
  if (row.children) {
    return {
      ...base,
      name: 'cordis:group',
      group: true,
      disabled: row.disabled ?? null,
      config: row.children.map(toEntryOptions),
    }
  }
  if (containsDeferred(row.disabled) || containsDeferred(row.config)) {
    return { ...base, name: DEFERRED_PREFIX + row.name, config: { config: row.config, disabled: row.disabled } }
  }
  if (row.config !== undefined) base.config = row.config
  if (row.disabled !== undefined) base.disabled = row.disabled
  return base
}

let entryInitPatched = false

/**
 * Upstream `Entry.init` ends with `fiber.await().finally(notify)`, so a plugin that fails to apply leaves an
 * unhandled rejection (which ends the process). Same steps, with the failure left to whoever checks the
 * fiber's state (app-boot reports it per row).
 */
function patchEntryInit() {
  if (entryInitPatched) return
  entryInitPatched = true
  ;(Entry.prototype as any).init = async function init(this: any) {
    try {
      await (this._initTask ??= this._init())
    } finally {
      this._initTask = undefined
    }
    this.fiber
      ?.await()
      .catch(() => {})
      .finally(() => {
        if (this.loader.getTasks().length) return
        this.ctx.reflect.notify(['loader'])
      })
  }
}

/**
 * Mounts the loader on `root` with our fixes: `baseUrl` set as a plain property on the root context,
 * `group` registered as a builtin, and every non-builtin name resolved by the app's resolver.
 */
export async function mountLoader(root: Context, options: LoaderHostOptions): Promise<LoaderHost> {
  patchEntryInit()
  await root.plugin(Loader as any, { baseUrl: options.baseUrl })
  Object.defineProperty(root, 'baseUrl', {
    value: options.baseUrl,
    writable: true,
    configurable: true,
    enumerable: true,
  })
  const loader = (root as any).loader as LoaderHost
  loader.builtins.group = Group
  const upstreamImport = loader.import.bind(loader)
  loader.import = ((name: string, getOuterStack?: () => string[]) => {
    if (name.startsWith('cordis:')) return upstreamImport(name, getOuterStack)
    if (name.startsWith(DEFERRED_PREFIX))
      return options.resolve(name.slice(DEFERRED_PREFIX.length)).then(deferredPlugin)
    return options.resolve(name)
  }) as any
  return loader
}
