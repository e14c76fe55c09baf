import type { Route, FinishReason, Sampling, ImageBlock, LlmErrorData, ReasoningBlock, TextBlock, ToolCallBlock, ToolResultBlock, ToolSchema, Usage } from '@dsh/llm'

export const TURN_END_REASONS = ['completed', 'aborted', 'blocked', 'error', 'max-tokens', 'max-steps', 'interrupted'] as const
export type TurnEndReason = (typeof TURN_END_REASONS)[number]

/** Where a user message came from: typed by the user, steering, injected context, or a summary. */
export type UserMessageSource = 'user' | 'steer' | 'inject' | 'instructions' | 'summary' | 'hook'

/** A typed failure carried by a `tool/result` or a `turn/end`, readable by the model and by people. */
export interface ErrorData {
  code: string
  message: string
}

/**
 * The event kinds and their data. Extensible: a package that owns a new durable fact adds its kind by
 * declaration merging (`declare module '@dsh/session' { interface SessionEventMap { … } }`) and registers
 * it at runtime with `ctx.sessions.defineKind()`.
 */
export interface SessionEventMap {
  'turn/start': { turnId: string }
  'turn/end': { turnId: string; reason: TurnEndReason; error?: ErrorData }
  'step/start': { turnId: string; step: number }
  'step/end': { turnId: string; step: number; finish: FinishReason }
  /** `messageId` is the receipt a surface gave the caller for this input (followup/steer/inject). */
  'user/message': { content: (TextBlock | ImageBlock)[]; source: UserMessageSource; replaces?: { fromSeq: number; toSeq: number }; messageId?: string }
  'assistant/chunk': { kind: 'text' | 'reasoning'; text: string }
  'assistant/message': {
    content: (TextBlock | ReasoningBlock | ToolCallBlock)[]
    usage: Usage
    finish: FinishReason
    interrupted?: boolean
    error?: LlmErrorData
  }
  'tool/call': { callId: string; name: string; arguments: unknown }
  /**
   * From now on the model sees the `tool/result` logged at `seq` with this shorter content (head and tail of
   * an old oversized output): the result stays in the log whole, and its call keeps its result.
   */
  'tool/pruned': { seq: number; content: ToolResultBlock['content']; note?: string }
  /** The call passed every check and its body is about to run: written and flushed before the effect. */
  'tool/dispatched': { callId: string }
  'tool/result': { callId: string; content: ToolResultBlock['content']; error?: ErrorData }
  /** What the model is told besides history, and how it samples: written when it changes. */
  'request/header': { system: string; tools: ToolSchema[]; sampling?: Sampling }
  /** Which model answers and its window: written when it changes. */
  'request/context': { provider: string; model: string; contextWindow: number; effort?: string }
  'inbox/spliced': { mode: 'followup' | 'steer' | 'inject'; count: number }
  /** The route (provider, model, effort) in force from the next request on. */
  'model/route': { route: Route }
  /**
   * Where the agent works (working directory, OS, date, shell, sandbox mode, git, top-level files, the
   * project's commands), as the model reads it in `text` (a user message in the history) and the stable
   * `facts` whose change logs a new one (@dsh/runtime-context writes it; docs/prompt.md).
   */
  'runtime/context': { text: string; facts: Record<string, string> }
}

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
  /** Extra validation of `data`; returns a problem or undefined. Checked on append and, unless `validateStored` is given, on load. */
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

export const CORE_KINDS: EventKind[] = [
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/dispatched',
  'tool/result',
  'tool/pruned',
  'request/header',
  'request/context',
  'inbox/spliced',
  'model/route',
  'runtime/context',
]
