/** One scripted tool call. Its arguments reach the client as several deltas that rejoin to the JSON. */
export interface MockToolCall {
  id?: string
  name: string
  arguments: string | Record<string, unknown>
  /** split the arguments JSON into this many deltas (default: the server's `toolArgumentPieces`, 3) */
  pieces?: number
}

/** Token usage of one scripted reply, disjoint like the `llm` seam's (docs/architecture.md, "Models"). */
export interface MockUsage {
  /** uncached input */
  input: number
  output: number
  cacheRead?: number
  cacheWrite?: number
  /** the part of `output` spent reasoning (OpenAI-style `completion_tokens_details.reasoning_tokens`) */
  reasoning?: number
}

/** What the server answers to one chat-completions or messages request. */
export interface MockReply {
  /** a string is split into several chunks (`chunkChars`); an array gives explicit chunks */
  text?: string | string[]
  /** DeepSeek/OpenAI: `delta.reasoning_content`; Anthropic: a thinking block (+ signature) */
  reasoning?: string | string[]
  toolCalls?: MockToolCall[]
  /** omitted: estimated from the request and reply sizes (`charsPerToken`), nothing cached */
  usage?: MockUsage
  /** default: 'tool-calls' when toolCalls, else 'stop' */
  finish?: 'stop' | 'tool-calls' | 'length'
  /** an HTTP error in the provider's error shape instead of a stream */
  error?: { status: number; message?: string; type?: string; code?: string; retryAfter?: number }
  /** the provider's real "context too long" 400 error for that protocol */
  contextOverflow?: boolean
  /** before the response starts */
  delayMs?: number
  /** between SSE events */
  chunkDelayMs?: number
  /** send N events, then keep the socket open and silent until the client aborts */
  stallAfterChunks?: number
  /** send N events, then destroy the socket (a transport failure) */
  cutAfterChunks?: number
  /** a stream with no content (finish only) */
  empty?: boolean
}

/** One request as the server received it. Timings are `performance.now()` of the server's process. */
export interface RecordedRequest {
  /** position in `requests` (0-based) */
  index: number
  protocol: 'openai' | 'anthropic'
  method: string
  /** the path as sent, query included */
  path: string
  headers: Record<string, string>
  /** parsed JSON, or the raw text when the body was not JSON (undefined when empty) */
  body: any
  timing: { receivedAt: number; firstByteAt?: number; endedAt?: number }
}

export type MockResponder = (request: RecordedRequest) => MockReply

export interface MockServer {
  /** http://HOST:PORT, without a trailing slash */
  url: string
  /** FIFO, consumed by chat/messages requests of either protocol */
  enqueue(...replies: MockReply[]): void
  /** dynamic responder used when the queue is empty */
  respondWith(fn: MockResponder | undefined): void
  requests: RecordedRequest[]
  /** replies still queued */
  pending(): number
  /** resolves once `count` requests were recorded; rejects after `timeoutMs` (default `waitTimeoutMs`) */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>
  /** forgets the queue, the responder, the repeated reply and the recorded requests */
  reset(): void
  /** stops listening and ends every open connection (stalled streams included); idempotent */
  close(): Promise<void>
}
