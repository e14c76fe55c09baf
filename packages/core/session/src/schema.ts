import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'
import {
  EFFORTS,
  FINISH_REASONS,
  LLM_ERROR_CODES,
  SAMPLING_FIELDS,
  type ImageBlock,
  type LlmErrorData,
  type Usage,
  type ReasoningBlock,
  type Route,
  type Sampling,
  type TextBlock,
  type ToolCallBlock,
  type ToolSchema,
} from '@dsh/llm'

// One schema per core event kind (issue #28.6; docs/architecture.md, "The session log"): `SessionEventMap`
// takes each kind's type from it (`Static`) and `checkShape` checks appended and stored data against it, so the
// type and the check cannot drift apart. TypeBox, as the tools' arguments and the protocols are declared.

/** One of a closed list of strings: the list is the single source of both the type and the check. */
export function oneOf<const T extends readonly string[]>(values: T): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] })
}

export const TURN_END_REASONS = [
  'completed',
  'aborted',
  'blocked',
  'error',
  'max-tokens',
  'max-steps',
  'interrupted',
] as const
export type TurnEndReason = (typeof TURN_END_REASONS)[number]
/**
 * The `code` of the abort reason a turn is cut with because dsh is stopping (a surface draining at Ctrl+C or
 * SIGTERM): the loop logs that turn `interrupted`, as the repair does for one a crash cut, not `aborted`
 * (which is the user's cancel), so every surface can offer to continue it.
 */
export const DSH_STOPPED = 'DSH_STOPPED'

/** Where a user message came from: typed by the user, steering, injected context, instructions, a summary or a hook. */
export const USER_MESSAGE_SOURCES = ['user', 'steer', 'inject', 'instructions', 'summary', 'hook'] as const
export type UserMessageSource = (typeof USER_MESSAGE_SOURCES)[number]

export const INBOX_MODES = ['followup', 'steer', 'inject'] as const

const natural = Type.Integer({ minimum: 0 })

const TextBlockSchema = Type.Object({ type: Type.Literal('text'), text: Type.String() })
const ReasoningBlockSchema = Type.Object({
  type: Type.Literal('reasoning'),
  text: Type.String(),
  provider: Type.Optional(Type.String()),
  signature: Type.Optional(Type.String()),
  redacted: Type.Optional(Type.String()),
})
/** `carriesOneOf`: an image is its bytes or a reference to them (the attachment store's digest). */
const ImageBlockSchema = Type.Object(
  {
    type: Type.Literal('image'),
    mediaType: Type.String(),
    data: Type.Optional(Type.String()),
    sha256: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
  },
  { carriesOneOf: ['data', 'sha256'] },
)
const ToolCallBlockSchema = Type.Object({
  type: Type.Literal('tool-call'),
  callId: Type.String(),
  name: Type.String(),
  arguments: Type.Unknown(),
})

/** A user's (or a tool result's) content: text and images. */
const UserContent = Type.Array(Type.Union([TextBlockSchema, ImageBlockSchema]))
/** A typed failure carried by a `tool/result` or a `turn/end`, readable by the model and by people. */
export const ErrorSchema = Type.Object({ code: Type.String(), message: Type.String() })
export type ErrorData = Static<typeof ErrorSchema>

/** A model failure as the loop logs it with the answer (`LlmError.toJSON()`). */
const LlmErrorSchema = Type.Object({
  code: oneOf(LLM_ERROR_CODES),
  message: Type.String(),
  status: Type.Optional(Type.Number()),
  retryAfterMs: Type.Optional(Type.Number()),
})
/** Disjoint token counts of one answer (`reasoning` absent when the provider reports no separate count). */
export const UsageSchema = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  reasoning: Type.Optional(Type.Number()),
})
const ToolSchemaSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  parameters: Type.Record(Type.String(), Type.Unknown()),
})
const SamplingSchema = Type.Object(
  {
    maxOutputTokens: Type.Optional(natural),
    temperature: Type.Optional(Type.Number()),
    toolChoice: Type.Optional(oneOf(['auto', 'none'] as const)),
  },
  { additionalProperties: false, fieldIs: 'sampling field' },
)
export const RouteSchema = Type.Object({
  provider: Type.String(),
  model: Type.String(),
  effort: Type.Optional(oneOf(EFFORTS)),
})

/** The data of each core kind. A kind's description is what it records. */
export const CORE_EVENT_SCHEMAS = {
  'turn/start': Type.Object({ turnId: Type.String() }),
  'turn/end': Type.Object({
    turnId: Type.String(),
    reason: oneOf(TURN_END_REASONS),
    error: Type.Optional(ErrorSchema),
  }),
  'step/start': Type.Object({ turnId: Type.String(), step: natural }),
  'step/end': Type.Object({ turnId: Type.String(), step: natural, finish: oneOf(FINISH_REASONS) }),
  'user/message': Type.Object(
    {
      content: UserContent,
      source: oneOf(USER_MESSAGE_SOURCES),
      replaces: Type.Optional(Type.Object({ fromSeq: natural, toSeq: natural })),
      messageId: Type.Optional(Type.String()),
    },
    {
      description:
        '`replaces` stands in for that range (compaction); `messageId` is the receipt a surface gave the caller for this input.',
    },
  ),
  'assistant/chunk': Type.Object({ kind: oneOf(['text', 'reasoning'] as const), text: Type.String() }),
  'assistant/message': Type.Object({
    content: Type.Array(Type.Union([TextBlockSchema, ReasoningBlockSchema, ToolCallBlockSchema])),
    usage: UsageSchema,
    finish: oneOf(FINISH_REASONS),
    interrupted: Type.Optional(Type.Boolean()),
    error: Type.Optional(LlmErrorSchema),
  }),
  'tool/call': Type.Object({
    callId: Type.String(),
    name: Type.String(),
    arguments: Type.Unknown(),
    /**
     * A call a program made (`run_code`, docs/architecture.md "Code mode"): the call that ran the program. Its
     * result is the program's to read, not the model's, so the history leaves it out.
     */
    parentCallId: Type.Optional(Type.String()),
  }),
  'tool/dispatched': Type.Object(
    { callId: Type.String() },
    { description: 'The call passed every check and its body is about to run: written and flushed before the effect.' },
  ),
  'tool/result': Type.Object({ callId: Type.String(), content: UserContent, error: Type.Optional(ErrorSchema) }),
  'tool/pruned': Type.Object(
    { seq: natural, content: UserContent, note: Type.Optional(Type.String()) },
    {
      description:
        'From now on the model sees the `tool/result` logged at `seq` with this shorter content; the log keeps the result whole.',
    },
  ),
  'request/header': Type.Object(
    { system: Type.String(), tools: Type.Array(ToolSchemaSchema), sampling: Type.Optional(SamplingSchema) },
    { description: 'What the model is told besides history, and how it samples: written when it changes.' },
  ),
  'request/context': Type.Object(
    {
      provider: Type.String(),
      model: Type.String(),
      contextWindow: Type.Number(),
      effort: Type.Optional(Type.String()),
    },
    { description: 'Which model answers and its window: written when it changes.' },
  ),
  'inbox/spliced': Type.Object({ mode: oneOf(INBOX_MODES), count: natural }),
  'model/route': Type.Object(
    { route: RouteSchema },
    { description: 'The route (provider, model, effort) in force from the next request on.' },
  ),
  'runtime/context': Type.Object(
    { text: Type.String(), facts: Type.Record(Type.String(), Type.String()) },
    {
      description:
        'Where the agent works, as the model reads it in `text`, and the stable `facts` whose change logs a new one (@dsh/runtime-context; docs/prompt.md).',
    },
  ),
}

export type CoreEventKind = keyof typeof CORE_EVENT_SCHEMAS
export type CoreEventData = { [K in CoreEventKind]: Static<(typeof CORE_EVENT_SCHEMAS)[K]> }

// The blocks, route, tool schema and sampling are @dsh/llm's vocabulary: the build fails if a schema here and
// the type there stop describing the same values.
/** `agrees<Same<Static<typeof schema>, Type>>(true)` fails the build when a schema and a type it mirrors part. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const agrees = <T extends true>(_: T): void => undefined
agrees<Same<Static<typeof TextBlockSchema>, TextBlock>>(true)
agrees<Same<Static<typeof ReasoningBlockSchema>, ReasoningBlock>>(true)
agrees<Same<Static<typeof ImageBlockSchema>, ImageBlock>>(true)
agrees<Same<Static<typeof ToolCallBlockSchema>, ToolCallBlock>>(true)
agrees<Same<Static<typeof ToolSchemaSchema>, ToolSchema>>(true)
agrees<Same<Static<typeof RouteSchema>, Route>>(true)
agrees<Same<Static<typeof SamplingSchema>, Sampling>>(true)
agrees<Same<Static<typeof UsageSchema>, Usage>>(true)
agrees<Same<Static<typeof LlmErrorSchema>, LlmErrorData>>(true)
agrees<Same<keyof Static<typeof SamplingSchema>, (typeof SAMPLING_FIELDS)[number]>>(true)

const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value)

/**
 * The first way `value` breaks `schema`, naming the field (`data.content[0].text must be a string`), or
 * undefined. Reads the JSON Schema a TypeBox schema is: the subset the event schemas use (string, non-empty
 * string, null, number, integer ≥ 0, boolean, enum and const, arrays, objects with required and optional
 * fields, records, unions of blocks told apart by `type` and unions of other values, `a whole number or
 * null`), plus `carriesOneOf` and `fieldIs` for the two rules JSON Schema says badly, and `is`, the noun of a
 * string's `pattern` (`data.skills[0].name must be a skill name`).
 */
export function checkShape(schema: TSchema, value: any, path: string): string | undefined {
  if (schema.enum) return schema.enum.includes(value) ? undefined : `${path} must be one of ${schema.enum.join(', ')}`
  if (schema.const !== undefined)
    return value === schema.const ? undefined : `${path} must be ${JSON.stringify(schema.const)}`
  if (schema.anyOf)
    return isBlockUnion(schema.anyOf) ? checkBlock(schema.anyOf, value, path) : checkEither(schema.anyOf, value, path)
  switch (schema.type) {
    case 'null':
      return value === null ? undefined : `${path} must be null`
    case 'string':
      if (typeof value !== 'string') return `${path} must be a string`
      if (value.length < (schema.minLength ?? 0))
        return `${path} must be ${schema.minLength === 1 ? 'a non-empty string' : `a string of at least ${schema.minLength} characters`}`
      return schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(value)
        ? undefined
        : `${path} must be ${schema.is ?? `a string matching ${schema.pattern}`}`
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `${path} must be a boolean`
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : `${path} must be a number`
    case 'integer':
      return Number.isInteger(value) && value >= (schema.minimum ?? -Infinity)
        ? undefined
        : `${path} must be a whole number${schema.minimum !== undefined ? ` ≥ ${schema.minimum}` : ''}`
    case 'array':
      if (!Array.isArray(value)) return `${path} must be an array`
      for (let i = 0; i < value.length; i++) {
        const problem = checkShape(schema.items, value[i], `${path}[${i}]`)
        if (problem) return problem
      }
      return undefined
    case 'object':
      return checkObject(schema, value, path)
    default:
      return undefined // Unknown: anything (plain JSON is checked for every event before its shape)
  }
}

function checkObject(schema: TSchema, value: any, path: string): string | undefined {
  if (!isObject(value)) return `${path} must be an object`
  const required: string[] = schema.required ?? []
  for (const [key, field] of Object.entries<TSchema>(schema.properties ?? {})) {
    if (value[key] === undefined && !required.includes(key)) continue
    const problem = checkShape(field, value[key], `${path}.${key}`)
    if (problem) return problem
  }
  const each = schema.patternProperties && Object.values<TSchema>(schema.patternProperties)[0] // a record
  if (each) {
    for (const key of Object.keys(value)) {
      const problem = checkShape(each, value[key], `${path}.${key}`)
      if (problem) return problem
    }
  }
  if (schema.additionalProperties === false) {
    const known = Object.keys(schema.properties ?? {})
    const extra = Object.keys(value).find((key) => !known.includes(key))
    if (extra !== undefined) return `${path}.${extra} is not a ${schema.fieldIs ?? 'known field'} (${known.join(', ')})`
  }
  const either: string[] | undefined = schema.carriesOneOf
  if (either && either.every((key) => value[key] === undefined)) return `${path} must carry ${either.join(' or ')}`
  return undefined
}

const isBlockUnion = (members: TSchema[]): boolean =>
  members.every((member) => member.properties?.type?.const !== undefined)

/** What a value of `schema` is, for a message: `a string`, `null`, `one of a, b`. */
function describe(schema: TSchema): string {
  if (schema.enum) return `one of ${schema.enum.join(', ')}`
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  const nouns: Record<string, string> = {
    null: 'null',
    string: 'a string',
    boolean: 'a boolean',
    number: 'a number',
    integer: 'a whole number',
    array: 'an array',
    object: 'an object',
  }
  if (schema.type === 'object' && schema.required?.length) return `an object with ${schema.required.join(', ')}`
  return nouns[schema.type as string] ?? 'a value'
}

/** A value of one of a union's members (`Type.Union([Type.Integer(), Type.Null()])`). */
function checkEither(members: TSchema[], value: any, path: string): string | undefined {
  if (members.some((member) => checkShape(member, value, path) === undefined)) return undefined
  // Objects told apart by the fields they carry (`{ sha256, bytes } | { absent: true }`): the one whose required
  // fields are all there names its own problem.
  const carried = members.filter(
    (member) =>
      member.type === 'object' &&
      isObject(value) &&
      (member.required ?? []).length > 0 &&
      member.required.every((key: string) => value[key] !== undefined),
  )
  if (carried.length === 1) return checkShape(carried[0]!, value, path)
  // `a whole number or null`: the other member's own message (it may name a field within), then the null.
  const other =
    members.length === 2 && members.some((member) => member.type === 'null')
      ? members.find((member) => member.type !== 'null')
      : undefined
  if (other) return `${checkShape(other, value, path)} or null`
  return `${path} must be ${members.map(describe).join(' or ')}`
}

/** A block of a union told apart by its `type` literal: a wrong `type` is named with the ones allowed. */
function checkBlock(members: TSchema[], value: any, path: string): string | undefined {
  if (!isObject(value)) return `${path} must be an object`
  const types = members.map((member) => member.properties?.type?.const as string)
  const member = members[types.indexOf(value.type as string)]
  if (!member) return `${path}.type must be one of ${types.join(', ')}`
  return checkShape(member, value, path)
}
