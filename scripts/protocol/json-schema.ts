// Turns the TypeBox declarations into one JSON Schema document: every schema with a `title` becomes a
// definition under `$defs`, and each place that uses it a `$ref` (TypeBox embeds copies, so the title is
// what identifies a named schema).
import type { TSchema } from '@sinclair/typebox'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/** Plain JSON of a schema (TypeBox's symbol keys dropped). */
export const plain = (schema: unknown): JsonObject => JSON.parse(JSON.stringify(schema)) as JsonObject

/** Every titled schema reachable from `roots`, by title; two different schemas under one title are an error. */
export function collectDefinitions(roots: TSchema[]): Map<string, JsonObject> {
  const found = new Map<string, JsonObject>()
  const visit = (node: Json, where: string) => {
    if (Array.isArray(node)) return node.forEach((item, index) => visit(item, `${where}[${index}]`))
    if (!node || typeof node !== 'object') return
    const title = typeof node.title === 'string' ? node.title : undefined
    if (title) {
      const { description: _d, ...shape } = node
      const known = found.get(title)
      if (known && JSON.stringify(withoutDescription(known)) !== JSON.stringify(shape))
        throw new Error(`two different schemas are titled "${title}" (at ${where})`)
      if (!known) found.set(title, node)
    }
    for (const [key, value] of Object.entries(node)) visit(value, `${where}.${key}`)
  }
  roots.forEach((root, index) => visit(plain(root), `root ${index}`))
  return found
}

const withoutDescription = ({ description: _d, ...rest }: JsonObject) => rest

/** The schema with every nested titled schema replaced by a reference (its own title kept at the top). */
export function referencing(schema: JsonObject, refPrefix: string): JsonObject {
  const replace = (node: Json, top: boolean): Json => {
    if (Array.isArray(node)) return node.map((item) => replace(item, false))
    if (!node || typeof node !== 'object') return node
    if (!top && typeof node.title === 'string') return { $ref: `${refPrefix}${node.title}` }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, replace(value, false)]))
  }
  return replace(schema, true) as JsonObject
}
