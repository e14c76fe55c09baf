import type { TSchema } from '@sinclair/typebox'
import { CORE_EVENT_SCHEMAS, type CoreEventData } from './schema.ts'

export {
  TURN_END_REASONS,
  USER_MESSAGE_SOURCES,
  type ErrorData,
  type TurnEndReason,
  type UserMessageSource,
} from './schema.ts'

/**
 * The event kinds and their data. Extensible: a package that owns a new durable fact adds its kind by
 * declaration merging (`declare module '@dsh/session' { interface SessionEventMap { … } }`) and registers
 * it at runtime with `ctx.sessions.defineKind()`. The core kinds' data types are their schemas'
 * (`CORE_EVENT_SCHEMAS` in schema.ts, which the log's check reads too; issue #28.6).
 */
export interface SessionEventMap extends CoreEventData {}

export type EventKind = keyof SessionEventMap & string

export interface SessionEvent<K extends EventKind = EventKind> {
  type: K
  seq: number
  /** Epoch milliseconds. */
  time: number
  data: SessionEventMap[K]
  /** Set on kinds declared ignorable: a reader without their plugin keeps them uninterpreted. */
  ignorable?: true
}

export type AnySessionEvent = { [K in EventKind]: SessionEvent<K> }[EventKind]

/** Runtime facts about a kind (types vanish at runtime; this is what the loader checks). */
export interface KindSpec {
  /** A reader that does not know the kind may keep it uninterpreted instead of refusing the log. */
  ignorable?: boolean
  /**
   * The kind's data as a TypeBox schema (`Type` of @dsh/session), the source of its type too (declare the kind
   * as `Static<typeof schema>`): the check is `checkShape(schema, data, 'data')`, then `validate` if given.
   */
  schema?: TSchema
  /**
   * Extra validation of `data` (after the schema's, if any); returns a problem or undefined. Checked on append
   * and, unless `validateStored` is given, on load.
   */
  validate?(data: any): string | undefined
  /**
   * The check of a stored event of this kind when older logs may hold less than an append now requires (a
   * field added later); without it, a stored event passes `validate` like an append.
   */
  validateStored?(data: any): string | undefined
}

/** The header of a stored session (the first JSONL line). */
export interface SessionHeader {
  format: 'dsh-session'
  version: 1
  id: string
  cwd: string
  createdAt: number
  parent?: { id: string; atSeq: number }
}

/** The kinds `@dsh/session` owns: those with a schema. */
export const CORE_KINDS = Object.keys(CORE_EVENT_SCHEMAS) as EventKind[]
