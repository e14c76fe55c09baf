import { isAbsolute } from 'node:path'
import { statSync } from 'node:fs'
import type { Effort, ImageBlock, TextBlock } from '@dsh/llm'
import type { PromptContent, RouteParam } from '@dsh/sdk-protocol'
import { invalidParams } from './errors.ts'

// The shapes of params are checked against the protocol's schemas before a method runs (server.ts); what
// is left here is what a schema cannot say: a directory exists, a route string has both its parts.

/** An absolute path to an existing directory. */
export function directory(path: string | undefined, field: string): string | undefined {
  if (path === undefined) return undefined
  if (!isAbsolute(path)) throw invalidParams(field, `must be an absolute path (got "${path}")`)
  let isDirectory = false
  try {
    isDirectory = statSync(path).isDirectory()
  } catch {
    throw invalidParams(field, `names no existing directory ("${path}")`)
  }
  if (!isDirectory) throw invalidParams(field, `is not a directory ("${path}")`)
  return path
}

/** A route as given: `provider/model`, a bare model (the provider is decided by the caller), or an object. */
export interface RouteInput {
  provider?: string
  model: string
  effort?: Effort
}

export function parseRoute(value: RouteParam | undefined, field: string): RouteInput | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string')
    return { provider: value.provider, model: value.model, ...(value.effort ? { effort: value.effort } : {}) }
  const slash = value.indexOf('/')
  if (slash === -1) {
    if (!value.trim()) throw invalidParams(field, 'must name a model ("provider/model" or "model")')
    return { model: value }
  }
  const provider = value.slice(0, slash)
  const model = value.slice(slash + 1)
  if (!provider || !model) throw invalidParams(field, `must be "provider/model" with both parts (got "${value}")`)
  return { provider, model }
}

/** Prompt content as blocks: a string is one text block. */
export function toBlocks(content: PromptContent): (TextBlock | ImageBlock)[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content.map((block) => ({ ...block }))
}

interface ObjectSchema {
  type?: unknown
  properties?: Record<string, ObjectSchema>
  additionalProperties?: unknown
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * `value` without the fields a closed object schema does not declare, at every level the schema declares as
 * an object, and the dotted names of what was left out (`cwd`, `capabilities.terminals`). Only `initialize`
 * reads params this way (a newer client's optional fields must not stop the handshake); the fields kept are
 * still checked as strictly as any method's.
 */
export function withoutUnknownFields(
  schema: ObjectSchema,
  value: Record<string, unknown>,
  prefix = '',
): { value: Record<string, unknown>; ignored: string[] } {
  const properties = schema.properties ?? {}
  const kept: Record<string, unknown> = {}
  const ignored: string[] = []
  for (const [key, field] of Object.entries(value)) {
    const declared = Object.hasOwn(properties, key) ? properties[key]! : undefined
    if (!declared) {
      if (schema.additionalProperties === false) ignored.push(prefix + key)
      else kept[key] = field
      continue
    }
    if (declared.type === 'object' && declared.properties && isPlainObject(field)) {
      const inner = withoutUnknownFields(declared, field, `${prefix}${key}.`)
      kept[key] = inner.value
      ignored.push(...inner.ignored)
    } else kept[key] = field
  }
  return { value: kept, ignored }
}
