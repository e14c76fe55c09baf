// The Anthropic messages wire: named SSE events (`event: <type>` + `data: {"type": <type>, ...}`) in the
// order the API sends them — message_start, then per content block start/delta…/stop (a ping after the
// first block starts), message_delta with the stop reason and cumulative usage, message_stop — plus the
// non-streaming message body, error bodies and the model list.
import type { ReplyPlan } from './chunking.ts'

export interface AnthropicMeta {
  id: string
  model: string
  /** the thinking block's signature (opaque to clients; they send it back on later turns) */
  signature: string
}

const STOP = { stop: 'end_turn', 'tool-calls': 'tool_use', length: 'max_tokens' } as const

const event = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`

export function anthropicUsage(usage: ReplyPlan['usage']) {
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    output_tokens: usage.output,
  }
}

/** Every SSE event of one streamed reply, `message_stop` last. */
export function anthropicStreamFrames(plan: ReplyPlan, meta: AnthropicMeta): string[] {
  const usage = anthropicUsage(plan.usage)
  // message_start reports the input side; output_tokens there is the API's running count so far.
  const start = {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) },
  }
  const frames = [event({ type: 'message_start', message: start })]
  const blocks: Array<{ start: Record<string, unknown>; deltas: Record<string, unknown>[] }> = []
  if (plan.reasoning.length) {
    blocks.push({
      start: { type: 'thinking', thinking: '', signature: '' },
      deltas: [
        ...plan.reasoning.map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature: meta.signature },
      ],
    })
  }
  if (plan.text.length)
    blocks.push({ start: { type: 'text', text: '' }, deltas: plan.text.map((text) => ({ type: 'text_delta', text })) })
  for (const call of plan.toolCalls) {
    // The API opens every tool input with an empty partial_json before the pieces.
    blocks.push({
      start: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      deltas: ['', ...call.pieces].map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    })
  }
  blocks.forEach((block, index) => {
    frames.push(event({ type: 'content_block_start', index, content_block: block.start }))
    if (index === 0) frames.push(event({ type: 'ping' }))
    for (const delta of block.deltas) frames.push(event({ type: 'content_block_delta', index, delta }))
    frames.push(event({ type: 'content_block_stop', index }))
  })
  if (!blocks.length) frames.push(event({ type: 'ping' }))
  frames.push(event({ type: 'message_delta', delta: { stop_reason: STOP[plan.finish], stop_sequence: null }, usage }))
  frames.push(event({ type: 'message_stop' }))
  return frames
}

/**
 * The `stream: false` body. Tool input must be an object here, so arguments that are not a JSON object
 * (scripted on purpose to test a streaming parser) cannot be answered without streaming.
 */
export function anthropicMessage(plan: ReplyPlan, meta: AnthropicMeta) {
  const content: Record<string, unknown>[] = []
  if (plan.reasoning.length)
    content.push({ type: 'thinking', thinking: plan.reasoning.join(''), signature: meta.signature })
  if (plan.text.length) content.push({ type: 'text', text: plan.text.join('') })
  for (const call of plan.toolCalls) {
    let input: unknown
    try {
      input = JSON.parse(call.arguments)
    } catch {
      input = undefined
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new Error(
        `tool call "${call.name}" has arguments that are not a JSON object, which a non-streaming Anthropic message cannot carry`,
      )
    }
    content.push({ type: 'tool_use', id: call.id, name: call.name, input })
  }
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content,
    stop_reason: STOP[plan.finish],
    stop_sequence: null,
    usage: anthropicUsage(plan.usage),
  }
}

// The API's error types by status (https://docs.anthropic.com/en/api/errors).
const ERRORS: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  402: { type: 'billing_error', message: 'Your credit balance is too low to access the Anthropic API.' },
  403: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: 'Not found' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
}

/** `{ type: 'error', error: { type, message }, request_id }`. Anthropic errors carry no `code`. */
export function anthropicError(status: number, requestId: string, override: { message?: string; type?: string } = {}) {
  const base = ERRORS[status] ?? (status >= 500 ? ERRORS[500] : ERRORS[400])
  return {
    type: 'error',
    error: { type: override.type ?? base.type, message: override.message ?? base.message },
    request_id: requestId,
  }
}

export function anthropicContextOverflow(window: number, requested: number, requestId: string) {
  return anthropicError(400, requestId, { message: `prompt is too long: ${requested} tokens > ${window} maximum` })
}

/** GET /v1/models with an `anthropic-version` header. */
export function anthropicModels(models: string[], createdAt: string) {
  const data = models.map((id) => ({ type: 'model', id, display_name: id, created_at: createdAt }))
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }
}
