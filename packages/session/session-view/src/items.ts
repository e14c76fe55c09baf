// The fold's input (a logged event) and its change reports. The item shapes it outputs are declared once, as
// schemas, in shapes.ts (the SDK protocol and the Python SDK's types are generated from the same ones).
import type { Item, Usage } from './shapes.ts'

export type * from './shapes.ts'

/**
 * A logged event as every surface receives it (`@dsh/session`'s `SessionEvent`, the web's `WireEvent`, the
 * SDK's notifications): this library reads it by shape, so a browser bundle needs no runtime package.
 */
export interface LogEvent {
  type: string
  seq: number
  /** Epoch milliseconds. */
  time: number
  data: any
  ignorable?: true
}

/**
 * What one event changed, for surfaces that send deltas (ACP) or re-render rows (web). `cause` is the type of
 * the event that made the change; `delta` is the streamed text an `assistant/chunk` added.
 */
export type ViewChange =
  | { op: 'added'; item: Item; cause: string; delta?: { kind: 'text' | 'reasoning'; text: string } }
  | { op: 'updated'; item: Item; previous: Item; cause: string; delta?: { kind: 'text' | 'reasoning'; text: string } }
  | { op: 'removed'; item: Item; cause: string }
  /** A model request's usage was counted (every `assistant/message`, even one that shows no item). */
  | { op: 'usage'; usage: Usage; cause: string }
  /** `openTurn`, `route`, `preset`, `window`, `lastUsage` or `todos` changed. */
  | { op: 'session'; cause: string }
