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
