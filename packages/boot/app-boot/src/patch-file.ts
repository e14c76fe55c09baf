import { readFileSync } from 'node:fs'
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type ScalarTag, YAMLMap } from 'yaml'
import { at, CompositionError, type Origin } from './errors.ts'
import { JsExpr } from './js-expr.ts'

/** A row as a patch file writes it. `children` makes it a group. */
export interface RowSpec {
  id: string
  name?: string
  config?: unknown
  disabled?: boolean | JsExpr
  inject?: string[] | Record<string, unknown>
  isolate?: Record<string, true | string>
  children?: RowSpec[]
  origin: Origin
}

export type PatchItem =
  | { kind: 'insert'; rows: RowSpec[]; into?: string; origin: Origin }
  | {
      kind: 'replace'
      id: string
      keys: Partial<Record<ReplaceableKey, unknown>>
      origin: Origin
      keyOrigins: Partial<Record<ReplaceableKey, Origin>>
    }

export const REPLACEABLE_KEYS = ['name', 'config', 'disabled', 'inject', 'isolate'] as const
export type ReplaceableKey = (typeof REPLACEABLE_KEYS)[number]
const ROW_KEYS = new Set(['id', 'name', 'config', 'disabled', 'inject', 'isolate', 'children'])

type Pos = ((node: Node | null | undefined) => Origin) & { toJS(node: unknown): unknown }

const jsTag: ScalarTag = {
  tag: 'tag:yaml.org,2002:js',
  resolve: (source: string) => new JsExpr(source) as any,
  identify: (value: unknown) => value instanceof JsExpr,
  stringify: (item: any) => (item.value as JsExpr).source,
}
export const yamlCustomTags = [jsTag]

/** Parses one patch file. Every shape error names the file and line. Pure apart from reading the file. */
export function readPatchFile(file: string): PatchItem[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new CompositionError(
      error instanceof Error && 'code' in error && error.code === 'ENOENT'
        ? 'patch file not found'
        : `cannot read patch file (${error instanceof Error && 'code' in error ? error.code : error})`,
      file,
      undefined,
      { cause: error },
    )
  }
  return parsePatch(text, file)
}

export function parsePatch(text: string, file: string): PatchItem[] {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, customTags: yamlCustomTags, prettyErrors: false })
  const pos: Pos = Object.assign(
    (node: Node | null | undefined): Origin => ({ file, line: node?.range ? lines.linePos(node.range[0]).line : 1 }),
    {
      toJS: (node: any) => node.toJS(doc),
    },
  )
  if (doc.errors.length) {
    const error = doc.errors[0]!
    throw new CompositionError(
      `malformed YAML: ${error.message.split('\n')[0]}`,
      file,
      lines.linePos(error.pos[0]).line,
    )
  }
  if (doc.contents === null) return []
  if (!isSeq(doc.contents))
    throw at(pos(doc.contents), 'a patch file must be a YAML list of items (`- insert: [...]` or `- id: <row>`)')
  return doc.contents.items.map((item) => parseItem(item as Node, pos))
}

function parseItem(node: Node, pos: Pos): PatchItem {
  const origin = pos(node)
  if (!isMap(node)) throw at(origin, 'a patch item must be a mapping with `insert` or `id`')
  const keys = mapKeys(node)
  if (keys.has('insert')) {
    for (const key of keys.keys()) {
      if (key !== 'insert' && key !== 'into')
        throw at(pos(keys.get(key)!.key), `unexpected key "${key}" in an insert item (expected insert, into)`)
    }
    const rowsNode = keys.get('insert')!.value
    if (!isSeq(rowsNode)) throw at(pos(rowsNode ?? node), '`insert` must be a list of rows')
    const into = keys.get('into')
    const item: PatchItem = { kind: 'insert', rows: rowsNode.items.map((row) => parseRow(row as Node, pos)), origin }
    if (into) item.into = scalarString(into.value, pos, '`into` must be a row id (a string)')
    return item
  }
  if (!keys.has('id')) throw at(origin, 'a patch item needs `insert` (to add rows) or `id` (to change a row)')
  const id = scalarString(keys.get('id')!.value, pos, '`id` must be a string')
  const replace: Partial<Record<ReplaceableKey, unknown>> = {}
  const keyOrigins: Partial<Record<ReplaceableKey, Origin>> = {}
  for (const [key, pair] of keys) {
    if (key === 'id') continue
    if (key === 'children')
      throw at(
        pos(pair.key),
        '`children` cannot be replaced; insert rows into the group with `- insert: [...]` and `into: <id>`',
      )
    if (!(REPLACEABLE_KEYS as readonly string[]).includes(key)) {
      throw at(pos(pair.key), `unexpected key "${key}" (a row change may set ${REPLACEABLE_KEYS.join(', ')})`)
    }
    replace[key as ReplaceableKey] = checkedValue(key, pair.value, pos)
    keyOrigins[key as ReplaceableKey] = pos(pair.key)
  }
  return { kind: 'replace', id, keys: replace, origin, keyOrigins }
}

function parseRow(node: Node, pos: Pos): RowSpec {
  const origin = pos(node)
  if (!isMap(node)) throw at(origin, 'a row must be a mapping with at least `id` and `name`')
  const keys = mapKeys(node)
  for (const [key, pair] of keys) {
    if (!ROW_KEYS.has(key))
      throw at(pos(pair.key), `unexpected key "${key}" in a row (expected ${[...ROW_KEYS].join(', ')})`)
  }
  if (!keys.has('id')) throw at(origin, 'a row needs an `id` so later layers can target it')
  const id = scalarString(keys.get('id')!.value, pos, '`id` must be a string')
  if (!/^[A-Za-z0-9_.-]+$/.test(id))
    throw at(pos(keys.get('id')!.value), `row id "${id}" may only hold letters, digits, "_", "." and "-"`)
  const row: RowSpec = { id, origin }
  const children = keys.get('children')
  if (children) {
    if (!isSeq(children.value)) throw at(pos(children.value ?? node), '`children` must be a list of rows')
    row.children = children.value.items.map((child) => parseRow(child as Node, pos))
    if (keys.has('name')) throw at(pos(keys.get('name')!.key), 'a group row (with `children`) takes no `name`')
    if (keys.has('config')) throw at(pos(keys.get('config')!.key), 'a group row (with `children`) takes no `config`')
  } else if (!keys.has('name')) {
    throw at(origin, `row "${id}" needs a \`name\` (the plugin package) or \`children\` (a group)`)
  }
  for (const key of REPLACEABLE_KEYS) {
    const pair = keys.get(key)
    if (pair) (row as any)[key] = checkedValue(key, pair.value, pos)
  }
  return row
}

function checkedValue(key: string, node: any, pos: Pos): unknown {
  const value = node == null ? null : (pos.toJS(node) ?? null)
  if (value === null) return null
  if (key !== 'config' && key !== 'disabled' && hasJs(node))
    throw at(pos(node), `\`!!js\` is only allowed in \`config\` and \`disabled\`, not in \`${key}\``)
  switch (key) {
    case 'name':
      if (typeof value !== 'string' || !value)
        throw at(pos(node), '`name` must be a non-empty string (a plugin package or a path)')
      return value
    case 'disabled':
      if (typeof value !== 'boolean' && !(value instanceof JsExpr))
        throw at(pos(node), '`disabled` must be true, false or a `!!js` expression')
      return value
    case 'inject': {
      const ok =
        (Array.isArray(value) && value.every((v) => typeof v === 'string')) ||
        (isMap(node) && typeof value === 'object')
      if (!ok) throw at(pos(node), '`inject` must be a list of service names or a mapping')
      return value
    }
    case 'isolate':
      if (!isMap(node) || !Object.values(value).every((v) => v === true || typeof v === 'string')) {
        throw at(pos(node), '`isolate` must map service names to true or a realm label')
      }
      return value
    default:
      return value
  }
}

function hasJs(node: any): boolean {
  if (!node) return false
  if (isScalar(node)) return node.tag === 'tag:yaml.org,2002:js'
  if (isMap(node) || isSeq(node))
    return (node.items as any[]).some((item) => (isMap(node) ? hasJs(item.value) : hasJs(item)))
  return false
}

function mapKeys(node: YAMLMap): Map<string, { key: Node; value: any }> {
  const result = new Map<string, { key: Node; value: any }>()
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
    result.set(key, { key: pair.key as Node, value: pair.value })
  }
  return result
}

function scalarString(node: any, pos: Pos, problem: string): string {
  if (!isScalar(node) || typeof node.value !== 'string' || !node.value) throw at(pos(node), problem)
  return node.value
}
