import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { TSchema } from '@sinclair/typebox'

/** Why a value does not match its schema: the field (`content[1].text`; empty for the value itself) and what is wrong. */
export interface ValueProblem {
  field: string
  problem: string
}

const ajv = new Ajv({ allErrors: true, strict: false })
const compiled = new WeakMap<object, ValidateFunction>()

/** Checks a value against one of the protocol's schemas; returns the one problem worth reporting, if any. */
export function checkValue(schema: TSchema, value: unknown): ValueProblem | undefined {
  let validate = compiled.get(schema)
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)))
  if (validate(value)) return undefined
  return mostSpecific(validate.errors ?? [])
}

type Located = { path: string[]; error: ErrorObject }

/** The path of the value an error is about: a missing or unexpected property counts as that property. */
function locate(error: ErrorObject): string[] {
  const path = error.instancePath
    ? error.instancePath
        .slice(1)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    : []
  if (error.keyword === 'required') return [...path, String(error.params.missingProperty)]
  if (error.keyword === 'additionalProperties') return [...path, String(error.params.additionalProperty)]
  return path
}

/**
 * Among the errors of every branch of a union, the one that names the real mistake. A branch whose tag
 * (`const`, e.g. `type: "image"`) did not match is not what the client meant, so its other errors are set
 * aside; of what is left the deepest wins (`content[1].text` rather than `content`). Tag errors themselves
 * count only when nothing else is as deep: then the value matched no branch at all.
 */
function mostSpecific(errors: ErrorObject[]): ValueProblem {
  const located: Located[] = errors
    .filter((error) => error.keyword !== 'anyOf')
    .map((error) => ({ path: locate(error), error }))
  const tags = located.filter((entry) => entry.error.keyword === 'const')
  const rejected = tags
    .map((entry) => entry.error.schemaPath.replace(/(.*\/anyOf\/\d+\/).*$/, '$1'))
    .filter((prefix) => prefix.includes('/anyOf/'))
  const kept = located.filter(
    (entry) => entry.error.keyword !== 'const' && !rejected.some((prefix) => entry.error.schemaPath.startsWith(prefix)),
  )
  const depthOf = (entry: Located) => entry.path.length
  const deepestKept = Math.max(-1, ...kept.map(depthOf))
  const candidates = [...kept, ...tags.filter((entry) => depthOf(entry) > deepestKept)]
  const depth = Math.max(...candidates.map(depthOf))
  const atDepth = candidates.filter((entry) => depthOf(entry) === depth)
  const alike = (keyword: string, param: string) => {
    const values = atDepth.filter((entry) => entry.error.keyword === keyword).map((entry) => entry.error.params[param])
    return values.length > 1 && values.length === atDepth.length
      ? [...new Set(values.map((value) => (keyword === 'const' ? JSON.stringify(value) : String(value))))]
      : undefined
  }
  const either = alike('type', 'type') ?? alike('const', 'allowedValue')
  return {
    field: fieldName(atDepth[0]!.path),
    problem: either ? `must be ${either.join(' or ')}` : describe(atDepth[0]!.error),
  }
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
      return 'is not a known field here'
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`
    case 'const':
      return `must be ${JSON.stringify(error.params.allowedValue)}`
    default:
      return error.message ?? `fails ${error.keyword}`
  }
}

/** `["content", "1", "text"]` → `content[1].text`. */
export function fieldName(path: string[]): string {
  return path.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '')
}
