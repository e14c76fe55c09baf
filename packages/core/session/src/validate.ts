import { EFFORTS, SAMPLING_FIELDS } from '@dsh/llm'
import { TURN_END_REASONS, type EventKind, type KindSpec } from './events.ts'

/**
 * The shapes of the core kinds, checked on append and on load (DESIGN §5): whatever a fold, repair or a
 * surface reads from an event is there with its type, so a stored log that passes cannot make them throw.
 * Each check returns the first problem, naming the field (`data.content[0].text must be a string`).
 */
type Check = (value: any, path: string) => string | undefined

const FINISH_REASONS = ['stop', 'tool-calls', 'max-tokens', 'aborted', 'error']
const SOURCES = ['user', 'steer', 'inject', 'instructions', 'summary', 'hook']

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value)

const string: Check = (value, path) => (typeof value === 'string' ? undefined : `${path} must be a string`)
const boolean: Check = (value, path) => (typeof value === 'boolean' ? undefined : `${path} must be a boolean`)
const number: Check = (value, path) => (typeof value === 'number' && Number.isFinite(value) ? undefined : `${path} must be a number`)
const natural: Check = (value, path) => (Number.isInteger(value) && value >= 0 ? undefined : `${path} must be a whole number ≥ 0`)
const anything: Check = () => undefined
/** An object whose every value is a string. */
const strings: Check = (value, path) => {
  if (!isObject(value)) return `${path} must be an object`
  const bad = Object.keys(value).find((key) => typeof value[key] !== 'string')
  return bad === undefined ? undefined : `${path}.${bad} must be a string`
}
const oneOf =
  (values: readonly string[]): Check =>
  (value, path) =>
    values.includes(value) ? undefined : `${path} must be one of ${values.join(', ')}`
const optional =
  (check: Check): Check =>
  (value, path) =>
    value === undefined ? undefined : check(value, path)

function object(fields: Record<string, Check>): Check {
  return (value, path) => {
    if (!isObject(value)) return `${path} must be an object`
    for (const [key, check] of Object.entries(fields)) {
      const problem = check(value[key], `${path}.${key}`)
      if (problem) return problem
    }
    return undefined
  }
}

function array(item: Check): Check {
  return (value, path) => {
    if (!Array.isArray(value)) return `${path} must be an array`
    for (let i = 0; i < value.length; i++) {
      const problem = item(value[i], `${path}[${i}]`)
      if (problem) return problem
    }
    return undefined
  }
}

/** A content block of one of `types`, by its `type`. */
function block(types: string[]): Check {
  return (value, path) => {
    if (!isObject(value)) return `${path} must be an object`
    if (!types.includes(value.type as string)) return `${path}.type must be one of ${types.join(', ')}`
    return BLOCKS[value.type as string]!(value, path)
  }
}

const image: Check = (value, path) =>
  object({ mediaType: string, data: optional(string), sha256: optional(string), description: optional(string) })(value, path) ??
  (value.data === undefined && value.sha256 === undefined ? `${path} must carry data or sha256` : undefined)

const BLOCKS: Record<string, Check> = {
  text: object({ text: string }),
  reasoning: object({ text: string, provider: optional(string), signature: optional(string), redacted: optional(string) }),
  image,
  'tool-call': object({ callId: string, name: string, arguments: anything }),
}

const userContent = array(block(['text', 'image']))
const error = object({ code: string, message: string })
const usage = object({ input: optional(number), output: optional(number), cacheRead: optional(number), cacheWrite: optional(number), reasoning: optional(number) })
const tool = object({ name: string, description: string, parameters: object({}) })
const sampling = object({ maxOutputTokens: optional(natural), temperature: optional(number), toolChoice: optional(oneOf(['auto', 'none'])) })

const SHAPES: Partial<Record<EventKind, Check>> = {
  'turn/start': object({ turnId: string }),
  'turn/end': object({ turnId: string, reason: oneOf(TURN_END_REASONS), error: optional(error) }),
  'step/start': object({ turnId: string, step: natural }),
  'step/end': object({ turnId: string, step: natural, finish: oneOf(FINISH_REASONS) }),
  'user/message': object({ content: userContent, source: oneOf(SOURCES), replaces: optional(object({ fromSeq: natural, toSeq: natural })), messageId: optional(string) }),
  'assistant/chunk': object({ kind: oneOf(['text', 'reasoning']), text: string }),
  'assistant/message': object({
    content: array(block(['text', 'reasoning', 'tool-call'])),
    usage: optional(usage),
    finish: oneOf(FINISH_REASONS),
    interrupted: optional(boolean),
    error: optional(error),
  }),
  'tool/call': object({ callId: string, name: string, arguments: anything }),
  'tool/dispatched': object({ callId: string }),
  'tool/result': object({ callId: string, content: userContent, error: optional(error) }),
  'tool/pruned': object({ seq: natural, content: userContent, note: optional(string) }),
  'request/header': (value, path) => object({ system: string, tools: array(tool), sampling: optional(sampling) })(value, path) ?? unknownSampling(value.sampling, `${path}.sampling`),
  'request/context': object({ provider: string, model: string, contextWindow: number, effort: optional(string) }),
  'inbox/spliced': object({ mode: oneOf(['followup', 'steer', 'inject']), count: natural }),
  'model/route': object({ route: object({ provider: string, model: string, effort: optional(oneOf(EFFORTS)) }) }),
  'runtime/context': object({ text: string, facts: strings }),
}

function unknownSampling(value: Record<string, unknown> | undefined, path: string): string | undefined {
  const unknown = Object.keys(value ?? {}).find((key) => !(SAMPLING_FIELDS as readonly string[]).includes(key))
  return unknown ? `${path}.${unknown} is not a sampling field (${SAMPLING_FIELDS.join(', ')})` : undefined
}

/** The runtime spec of each core kind: its shape check. */
export const CORE_SPECS = Object.fromEntries(Object.entries(SHAPES).map(([kind, check]) => [kind, { validate: (data: unknown) => check(data, 'data') }])) as Partial<Record<EventKind, KindSpec>>
