// The `--json` lines of a headless run, declared once (TypeBox, so they are JSON Schema): the TypeScript
// types are `Static<…>` of them, and `npm run generate:protocol` writes them to
// docs/headless-lines.schema.json (checked fresh by scripts/gates/protocol-generated.mjs). A test validates
// real runs' output against the generated file.
import { Type, type Static } from '@sinclair/typebox'

/** Bumped when a line changes incompatibly (a key removed or its meaning changed); additions keep it. */
export const HEADLESS_LINES_VERSION = 1

const closed = { additionalProperties: false } as const
const count = () => Type.Integer({ minimum: 0 })

export const EventLineSchema = Type.Object(
  {
    type: Type.String({
      description: 'The event kind (`turn/start`, `user/message`, `tool/call`, …; never `result`).',
      not: { const: 'result' },
    }),
    seq: count(),
    time: Type.Number({ description: 'Epoch milliseconds.' }),
    data: Type.Unknown({
      description: "The event's data exactly as logged (see SessionEventMap in @dsh/session and each kind's owner).",
    }),
    sessionId: Type.String(),
  },
  { ...closed, title: 'EventLine', description: 'One session event appended during the run, in log order.' },
)

export const RunUsageSchema = Type.Object(
  {
    requests: count(),
    input: count(),
    cacheRead: count(),
    cacheWrite: count(),
    output: count(),
    cacheHitShare: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description:
        'Cached input tokens / all input tokens (uncached, cache reads and writes), as the provider reported them; null with no input.',
    }),
  },
  {
    ...closed,
    title: 'RunUsage',
    description:
      "Tokens of this run's model requests (turns and compaction), as logged: input excludes cache reads and writes; output includes reasoning.",
  },
)

export const RunRefusalSchema = Type.Object(
  { tool: Type.String(), summary: Type.String(), by: Type.String(), note: Type.Optional(Type.String()) },
  {
    ...closed,
    title: 'RunRefusal',
    description: 'An approval refused during the run, and who refused it (`no-answerer` when nobody could answer).',
  },
)

export const ResultLineSchema = Type.Object(
  {
    type: Type.Literal('result'),
    version: Type.Literal(HEADLESS_LINES_VERSION),
    sessionId: Type.Union([Type.String(), Type.Null()], {
      description: 'Null when the run failed before a session was opened (a bad flag, a missing key).',
    }),
    exitCode: count(),
    reason: Type.String({
      description:
        "The last turn's `turn/end` reason (completed, aborted, blocked, error, max-tokens, max-steps, interrupted), or `not-started`.",
    }),
    text: Type.String({ description: 'The final assistant text of the run (empty when there is none).' }),
    error: Type.Optional(Type.Object({ code: Type.Optional(Type.String()), message: Type.String() }, closed)),
    turns: count(),
    steps: count(),
    usage: RunUsageSchema,
    cost: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: 'USD from the `usage.prices` setting; null when a request ran on a model without a price.',
    }),
    cacheSaved: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description:
        "USD the provider's prompt cache saved in this run (cache reads at the input price less their cached price); null when a request ran on a model without a price.",
    }),
    unpriced: Type.Array(Type.String(), { description: 'The `provider/model`s the price table does not name.' }),
    durationMs: count(),
    refusals: Type.Array(RunRefusalSchema),
    structuredOutput: Type.Optional(
      Type.Unknown({
        description: 'With --output-schema: the final answer parsed as JSON and valid against the schema.',
      }),
    ),
  },
  {
    ...closed,
    title: 'ResultLine',
    description: 'The last line of every `--json` run: what a CI job needs without reading the events.',
  },
)

export const HeadlessLineSchema = Type.Union([EventLineSchema, ResultLineSchema], { title: 'HeadlessLine' })

export type EventLine = Static<typeof EventLineSchema>
export type RunUsage = Static<typeof RunUsageSchema>
export type RunRefusal = Static<typeof RunRefusalSchema>
export type ResultLine = Static<typeof ResultLineSchema>
