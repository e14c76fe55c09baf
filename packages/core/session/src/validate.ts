import { CORE_EVENT_SCHEMAS, checkShape } from './schema.ts'
import type { EventKind, KindSpec } from './events.ts'

/**
 * The shapes of the core kinds, checked on append and on load (docs/architecture.md, "The session log"): whatever a fold, repair or a
 * surface reads from an event is there with its type, so a stored log that passes cannot make them throw.
 * Each check is the kind's schema (`schema.ts`, the source of its type too) and returns the first problem,
 * naming the field (`data.content[0].text must be a string`).
 */
export const CORE_SPECS = Object.fromEntries(
  Object.entries(CORE_EVENT_SCHEMAS).map(([kind, schema]) => [kind, withSchemaCheck({ schema })]),
) as Partial<Record<EventKind, KindSpec>>

/**
 * A kind declared by its schema is checked against it first; the owner's `validate`, if any, then checks what a
 * schema does not say (a rule across fields), on data already of the schema's shape.
 */
export function withSchemaCheck(spec: KindSpec): KindSpec {
  const { schema, validate } = spec
  if (!schema) return spec
  return { ...spec, validate: (data: unknown) => checkShape(schema, data, 'data') ?? validate?.(data) }
}
