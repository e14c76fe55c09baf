/**
 * The provider-neutral vocabulary every adapter speaks (docs/architecture.md, "Models"). Plain JSON only: these values are stored
 * in the session log as they are.
 */

export interface TextBlock {
  type: 'text'
  text: string
}

/** Model reasoning. `provider` and `signature` let an adapter echo it back only to the provider that made it. */
export interface ReasoningBlock {
  type: 'reasoning'
  text: string
  provider?: string
  signature?: string
  /** Encrypted reasoning a provider returned instead of text (Anthropic `redacted_thinking`). */
  redacted?: string
}

/** An image, inline (base64) or by content hash of a stored attachment. */
export interface ImageBlock {
  type: 'image'
  mediaType: string
  data?: string
  sha256?: string
  /** What a text-only route is shown instead of the image. */
  description?: string
}

export interface ToolCallBlock {
  type: 'tool-call'
  callId: string
  name: string
  /** Parsed JSON arguments (an object), or the raw string when the model sent invalid JSON. */
  arguments: unknown
}

export interface ToolResultBlock {
  type: 'tool-result'
  callId: string
  content: (TextBlock | ImageBlock)[]
  isError?: boolean
}

export type ContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock

export type Message =
  | { role: 'user'; content: (TextBlock | ImageBlock)[] }
  | { role: 'assistant'; content: (TextBlock | ReasoningBlock | ToolCallBlock)[] }
  | { role: 'tool'; content: ToolResultBlock[] }

/** A tool as the model is told about it: JSON Schema parameters. */
export interface ToolSchema {
  name: string
  description: string
  parameters: Record<string, unknown>
}

/** Disjoint token counts: `input` excludes cache reads and writes. */
export interface Usage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  /**
   * Output tokens the model spent reasoning, already counted in `output`. Absent when the provider reports no
   * separate count (Anthropic): absent is "not reported", never 0.
   */
  reasoning?: number
}

export const EFFORTS = ['off', 'low', 'high', 'max'] as const
export type Effort = (typeof EFFORTS)[number]

/** Which model answers: a durable fact of the session (the `model/route` event). */
export interface Route {
  provider: string
  model: string
  effort?: Effort
}

/** How a model response ended; the list is what the session log's check accepts too (@dsh/session's schema). */
export const FINISH_REASONS = ['stop', 'tool-calls', 'max-tokens', 'aborted', 'error'] as const
export type FinishReason = (typeof FINISH_REASONS)[number]

/** Whether the model may answer with tool calls: `auto` (it decides) or `none` (text only). */
export type ToolChoice = 'auto' | 'none'

export interface LlmRequest {
  route: Route
  system: string
  messages: Message[]
  tools: ToolSchema[]
  /**
   * Absent: the provider's default (`auto` when tools are sent). `none` keeps the tools in the request (so a
   * provider's prompt cache over them still hits) but forbids calling them, e.g. for a compaction summary.
   * Adapters send it only with tools: without tools there is nothing to choose.
   */
  toolChoice?: ToolChoice
  maxOutputTokens?: number
  temperature?: number
  signal: AbortSignal
  /**
   * Whose log this request derives from, so the request check at the `llm/stream` boundary can derive it
   * afresh (docs/architecture.md, "The session log"). A request without one is refused.
   */
  origin?: RequestOrigin
}

/**
 * A request is a step of a session's turn, a compaction summary of a session, a session's title (the
 * auxiliary request `@dsh/session-admin` logs as `title/request`), or declared session-less
 * (with why: an adapter's wire test); a session-less request is only checked against itself as the caller
 * made it, so `llm/stream` listeners still cannot change it.
 */
export type RequestOrigin = { sessionId: string; purpose: 'turn' | 'compaction' | 'title' } | { sessionless: string }

/** The sampling fields of a request: logged with the request header, so the check can compare them. */
export const SAMPLING_FIELDS = ['maxOutputTokens', 'temperature', 'toolChoice'] as const
export type Sampling = Pick<LlmRequest, (typeof SAMPLING_FIELDS)[number]>

/** The closed stream protocol: deltas, then exactly one `finish`, always last. */
export type StreamChunk =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string; signature?: string; redacted?: string }
  | { type: 'tool-call-delta'; index: number; callId?: string; name?: string; argumentsDelta?: string }
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'finish'; reason: FinishReason; usage?: Usage; error?: LlmErrorData }

export interface ModelInfo {
  id: string
  contextWindow: number
  maxOutputTokens?: number
  images: boolean
  reasoning: boolean
  efforts?: Effort[]
}

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })

/** The sum; `reasoning` only when either side reported it (a sum of unreported counts stays unreported). */
export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  const reasoning =
    a.reasoning === undefined && b.reasoning === undefined ? undefined : (a.reasoning ?? 0) + (b.reasoning ?? 0)
  return {
    input: a.input + (b.input ?? 0),
    output: a.output + (b.output ?? 0),
    cacheRead: a.cacheRead + (b.cacheRead ?? 0),
    cacheWrite: a.cacheWrite + (b.cacheWrite ?? 0),
    ...(reasoning !== undefined ? { reasoning } : {}),
  }
}

export const LLM_ERROR_CODES = [
  'AUTH',
  'QUOTA',
  'RATE_LIMIT',
  'CONTEXT_WINDOW_EXCEEDED',
  'SERVER',
  'TIMEOUT',
  'TRANSPORT',
  'ABORTED',
  'INVALID_REQUEST',
  'EMPTY_RESPONSE',
  'UNSUPPORTED',
  'UNKNOWN_PROVIDER',
  'CREDENTIAL_MISSING',
  'INVARIANT_VIOLATION',
] as const
export type LlmErrorCode = (typeof LLM_ERROR_CODES)[number]

export interface LlmErrorData {
  code: LlmErrorCode
  message: string
  status?: number
  retryAfterMs?: number
}

/** A typed model failure. `message` must never contain a credential (adapters redact). */
export class LlmError extends Error {
  override name = 'LlmError'
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    readonly extra: { status?: number; retryAfterMs?: number } = {},
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
  toJSON(): LlmErrorData {
    return { code: this.code, message: this.message, ...this.extra }
  }
  static from(data: LlmErrorData): LlmError {
    return new LlmError(data.code, data.message, { status: data.status, retryAfterMs: data.retryAfterMs })
  }
}
