import { at, type Origin } from './errors.ts'
import type { PatchItem, ReplaceableKey, RowSpec } from './patch-file.ts'
import type { JsExpr } from './js-expr.ts'

/** One patch layer in composition order (docs/architecture.md, "Composition"). */
export interface Layer {
  /** Human name: `bundle @dsh/bundle-base`, `profile web (home)`, `home`, `--patch`. */
  label: string
  file: string
  items: PatchItem[]
}

/** A layer's touch on a row: which layer, where, which keys. */
export interface Touch {
  layer: number
  origin: Origin
  keys: string[]
}

export interface ComposedRow {
  id: string
  name?: string
  config?: unknown
  disabled?: boolean | JsExpr
  inject?: string[] | Record<string, unknown>
  isolate?: Record<string, true | string>
  children?: ComposedRow[]
  /** Index of the layer that last set `name`: names resolve from that layer's place. */
  nameLayer: number
  /** Where `config` was last set (validation errors point here), or where the row was inserted. */
  configOrigin: Origin
  touches: Touch[]
}

export interface Composition {
  layers: Layer[]
  rows: ComposedRow[]
}

/**
 * The one composition function, shared by boot and `--dump-config`: layers in, rows out. Pure: it reads no
 * files and mutates none of its inputs. Later layers win; rows inserted earlier are targetable later.
 */
export function compose(layers: Layer[]): Composition {
  const rows: ComposedRow[] = []
  const byId = new Map<string, ComposedRow>()
  layers.forEach((layer, index) => {
    for (const item of layer.items) {
      if (item.kind === 'insert') {
        let target = rows
        if (item.into !== undefined) {
          const group = byId.get(item.into)
          if (!group) throw at(item.origin, `\`into: ${item.into}\` matches no row${knownIds(byId)}`)
          if (!group.children)
            throw at(item.origin, `\`into: ${item.into}\` is not a group (a group row has \`children\`)`)
          target = group.children
        }
        for (const spec of item.rows) target.push(materialize(spec, index, byId))
      } else {
        const row = byId.get(item.id)
        if (!row) throw at(item.origin, `no row has id "${item.id}"${knownIds(byId)}`)
        applyReplace(row, item.keys, index, item.origin, item.keyOrigins.config)
      }
    }
  })
  return { layers, rows }
}

function materialize(spec: RowSpec, layer: number, byId: Map<string, ComposedRow>): ComposedRow {
  const existing = byId.get(spec.id)
  if (existing) {
    const first = existing.touches[0]!.origin
    throw at(spec.origin, `row id "${spec.id}" is already used (inserted at ${first.file}:${first.line})`)
  }
  const row: ComposedRow = { id: spec.id, nameLayer: layer, configOrigin: spec.origin, touches: [] }
  const keys: string[] = []
  for (const key of ['name', 'config', 'disabled', 'inject', 'isolate'] as const) {
    if (spec[key] !== undefined && spec[key] !== null) {
      ;(row as any)[key] = structuredCloneKeepingJs(spec[key])
      keys.push(key)
    }
  }
  row.touches.push({ layer, origin: spec.origin, keys: ['insert', ...keys] })
  byId.set(spec.id, row)
  if (spec.children) row.children = spec.children.map((child) => materialize(child, layer, byId))
  return row
}

function applyReplace(
  row: ComposedRow,
  keys: Partial<Record<ReplaceableKey, unknown>>,
  layer: number,
  origin: Origin,
  configOrigin?: Origin,
): void {
  for (const [key, value] of Object.entries(keys)) {
    if (key === 'name' && row.children) throw at(origin, `row "${row.id}" is a group: it has no \`name\` to replace`)
    if (key === 'config' && row.children)
      throw at(origin, `row "${row.id}" is a group: it has no \`config\` to replace`)
    if (key === 'name' && value === null) throw at(origin, `\`name\` of row "${row.id}" cannot be removed`)
    if (value === null) delete (row as any)[key]
    else (row as any)[key] = structuredCloneKeepingJs(value)
    if (key === 'name') row.nameLayer = layer
    if (key === 'config') row.configOrigin = configOrigin ?? origin
  }
  row.touches.push({ layer, origin, keys: Object.keys(keys) })
}

function knownIds(byId: Map<string, ComposedRow>): string {
  const ids = [...byId.keys()]
  if (!ids.length) return ' (no rows exist yet)'
  return ` (known ids: ${ids.slice(0, 12).join(', ')}${ids.length > 12 ? ', …' : ''})`
}

/** Deep copy that keeps JsExpr instances (structuredClone would turn them into plain objects). */
function structuredCloneKeepingJs<T>(value: T): T {
  if (Array.isArray(value)) return value.map(structuredCloneKeepingJs) as T
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuredCloneKeepingJs(v)])) as T
  }
  return value
}

/** Walks every row, depth first, with its parent group id. */
export function* walkRows(rows: ComposedRow[], parent: string | null = null): Generator<[ComposedRow, string | null]> {
  for (const row of rows) {
    yield [row, parent]
    if (row.children) yield* walkRows(row.children, row.id)
  }
}
