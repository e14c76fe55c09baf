import { isAbsolute } from 'node:path'
import { statSync } from 'node:fs'
import { EFFORTS, type Effort, type ImageBlock, type TextBlock } from '@dsh/llm'
import { invalidParams } from './errors.ts'

type Params = Record<string, unknown>

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value)

/** Parameter readers: each returns the value or throws INVALID_PARAMS naming the field and what was wrong. */
export function string(params: Params, field: string): string {
  const value = params[field]
  if (typeof value !== 'string' || !value) throw invalidParams(field, `must be a non-empty string (got ${value === '' ? 'an empty string' : describe(value)})`)
  return value
}

export function optionalString(params: Params, field: string): string | undefined {
  return params[field] === undefined ? undefined : string(params, field)
}

export function integer(params: Params, field: string, min = 0): number {
  const value = params[field]
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw invalidParams(field, `must be an integer ≥ ${min} (got ${JSON.stringify(value) ?? 'nothing'})`)
  return value
}

export function optionalInteger(params: Params, field: string, min = 0): number | undefined {
  return params[field] === undefined ? undefined : integer(params, field, min)
}

export function optionalObject(params: Params, field: string): Params | undefined {
  const value = params[field]
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParams(field, `must be an object (got ${describe(value)})`)
  return value as Params
}

/** An absolute path to an existing directory. */
export function directory(params: Params, field: string): string | undefined {
  const path = optionalString(params, field)
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

export function optionalRoute(params: Params, field: string): RouteInput | undefined {
  const value = params[field]
  if (value === undefined) return undefined
  if (typeof value === 'string') {
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
  const object = optionalObject(params, field)!
  const route: RouteInput = { provider: string(object, 'provider'), model: '' }
  try {
    route.model = string(object, 'model')
  } catch {
    throw invalidParams(`${field}.model`, `must be a non-empty string (got ${describe(object.model)})`)
  }
  if (object.effort !== undefined) {
    if (!EFFORTS.includes(object.effort as Effort)) throw invalidParams(`${field}.effort`, `must be one of ${EFFORTS.join(', ')} (got ${JSON.stringify(object.effort)})`)
    route.effort = object.effort as Effort
  }
  return route
}

/** Prompt content: a non-empty string, or a non-empty array of text and image blocks. */
export function content(params: Params, field: string): (TextBlock | ImageBlock)[] {
  const value = params[field]
  if (typeof value === 'string') {
    if (!value) throw invalidParams(field, 'must not be empty')
    return [{ type: 'text', text: value }]
  }
  if (!Array.isArray(value) || !value.length) throw invalidParams(field, `must be a non-empty string or a non-empty array of content blocks (got ${describe(value)})`)
  return value.map((block, index) => {
    const at = `${field}[${index}]`
    if (typeof block !== 'object' || block === null) throw invalidParams(at, `must be a content block object (got ${describe(block)})`)
    if (block.type === 'text') {
      if (typeof block.text !== 'string') throw invalidParams(`${at}.text`, `must be a string (got ${describe(block.text)})`)
      return { type: 'text', text: block.text }
    }
    if (block.type === 'image') {
      if (typeof block.mediaType !== 'string' || !block.mediaType.startsWith('image/')) throw invalidParams(`${at}.mediaType`, `must be an image media type such as "image/png" (got ${JSON.stringify(block.mediaType) ?? 'nothing'})`)
      if (typeof block.data !== 'string' || !block.data) throw invalidParams(`${at}.data`, 'must be the image as base64')
      return { type: 'image', mediaType: block.mediaType, data: block.data }
    }
    throw invalidParams(`${at}.type`, `must be "text" or "image" (got ${JSON.stringify(block.type) ?? 'nothing'})`)
  })
}
