// The OpenAI-compatible chat-completions wire: streamed `chat.completion.chunk` objects, the non-streaming
// `chat.completion` body, error bodies and the model list, in two dialects that differ where the real
// providers differ:
//   - deepseek: usage rides on the finish chunk (always; with `include_usage` every other chunk carries
//     `"usage": null`), with `prompt_cache_hit_tokens`/`prompt_cache_miss_tokens`; no usage-only chunk.
//   - openai: usage only when `stream_options.include_usage` is set, as an extra chunk with `choices: []`
//     before `[DONE]` (every other chunk then carries `"usage": null`).
import type { PlannedToolCall, ReplyPlan } from './chunking.ts'

export type OpenAIDialect = 'deepseek' | 'openai'

export interface OpenAIMeta {
  id: string
  model: string
  /** unix seconds */
  created: number
  dialect: OpenAIDialect
  includeUsage: boolean
}

const FINISH = { stop: 'stop', 'tool-calls': 'tool_calls', length: 'length' } as const
const FINGERPRINT = 'fp_llm_mock_server'

/** OpenAI-style usage. There is no cache-write count in this protocol: written tokens count as uncached. */
export function openaiUsage(usage: ReplyPlan['usage'], dialect: OpenAIDialect) {
  const miss = usage.input + usage.cacheWrite
  const prompt = miss + usage.cacheRead
  const base = { prompt_tokens: prompt, completion_tokens: usage.output, total_tokens: prompt + usage.output }
  if (dialect === 'deepseek') {
    return {
      ...base,
      prompt_tokens_details: { cached_tokens: usage.cacheRead },
      ...(usage.reasoning ? { completion_tokens_details: { reasoning_tokens: usage.reasoning } } : {}),
      prompt_cache_hit_tokens: usage.cacheRead,
      prompt_cache_miss_tokens: miss,
    }
  }
  return {
    ...base,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

const frame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`

/** Every SSE event of one streamed reply, `data: [DONE]` last. */
export function openaiStreamFrames(plan: ReplyPlan, meta: OpenAIMeta): string[] {
  const deepseek = meta.dialect === 'deepseek'
  const reasons = plan.reasoning.length > 0
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(usage !== undefined ? { usage } : meta.includeUsage ? { usage: null } : {}),
  })
  const frames: string[] = []
  // The role delta opens every stream. DeepSeek's reasoning streams open with a null content.
  const role = deepseek
    ? reasons
      ? { role: 'assistant', content: null, reasoning_content: '' }
      : { role: 'assistant', content: '' }
    : { role: 'assistant', content: '', refusal: null }
  frames.push(frame(chunk(role)))
  for (const piece of plan.reasoning) frames.push(frame(chunk({ content: null, reasoning_content: piece })))
  for (const piece of plan.text)
    frames.push(frame(chunk(deepseek && reasons ? { content: piece, reasoning_content: null } : { content: piece })))
  plan.toolCalls.forEach((call, index) =>
    frames.push(...toolCallFrames(call, index).map((delta) => frame(chunk(delta)))),
  )
  const finish = FINISH[plan.finish]
  const usage = openaiUsage(plan.usage, meta.dialect)
  if (deepseek) frames.push(frame(chunk({ content: '' }, finish, usage)))
  else {
    frames.push(frame(chunk({}, finish)))
    if (meta.includeUsage) {
      const { choices: _none, ...head } = chunk({})
      frames.push(frame({ ...head, choices: [], usage }))
    }
  }
  frames.push('data: [DONE]\n\n')
  return frames
}

/** The first delta names the call (index, id, type, name, empty arguments); the rest carry arguments. */
function toolCallFrames(call: PlannedToolCall, index: number) {
  const head = { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }
  return [head, ...call.pieces.map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] }))]
}

/** The `stream: false` body. */
export function openaiCompletion(plan: ReplyPlan, meta: OpenAIMeta) {
  const deepseek = meta.dialect === 'deepseek'
  const text = plan.text.join('')
  const message: Record<string, unknown> = { role: 'assistant', content: text || (deepseek ? '' : null) }
  if (!deepseek) message.refusal = null
  if (plan.reasoning.length) message.reasoning_content = plan.reasoning.join('')
  if (plan.toolCalls.length)
    message.tool_calls = plan.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }))
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[plan.finish] }],
    usage: openaiUsage(plan.usage, meta.dialect),
    system_fingerprint: FINGERPRINT,
  }
}

interface ErrorFields {
  message: string
  type: string
  code: string | null
  param?: string | null
}

// Messages and types as each provider sends them for the status (DeepSeek's texts follow its error-code page).
const DEEPSEEK_ERRORS: Record<number, ErrorFields> = {
  400: { message: 'Invalid Format', type: 'invalid_request_error', code: 'invalid_request_error' },
  401: {
    message: 'Authentication Fails, Your api key: ****mock is invalid',
    type: 'authentication_error',
    code: 'invalid_request_error',
  },
  402: { message: 'Insufficient Balance', type: 'unknown_error', code: 'invalid_request_error' },
  422: { message: 'Invalid Parameters', type: 'invalid_request_error', code: 'invalid_request_error' },
  429: { message: 'Rate Limit Reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  500: { message: 'Server Error', type: 'server_error', code: 'internal_error' },
  503: { message: 'Server Overloaded', type: 'server_error', code: 'server_overloaded' },
}
const OPENAI_ERRORS: Record<number, ErrorFields> = {
  400: { message: 'Invalid request.', type: 'invalid_request_error', code: null },
  401: {
    message:
      'Incorrect API key provided: sk-mock. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
  403: { message: 'You are not allowed to sample from this model', type: 'invalid_request_error', code: null },
  404: {
    message: 'The model does not exist or you do not have access to it.',
    type: 'invalid_request_error',
    code: 'model_not_found',
  },
  429: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
  500: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    code: null,
  },
  503: { message: 'The engine is currently overloaded, please try again later', type: 'server_error', code: null },
}

/** `{ error: { message, type, param, code } }`, the provider's text for the status unless overridden. */
export function openaiError(
  status: number,
  dialect: OpenAIDialect,
  override: { message?: string; type?: string; code?: string } = {},
) {
  const known = (dialect === 'deepseek' ? DEEPSEEK_ERRORS : OPENAI_ERRORS)[status]
  const fallback: ErrorFields =
    status >= 500
      ? { message: 'Server Error', type: 'server_error', code: null }
      : { message: 'Request failed', type: 'invalid_request_error', code: null }
  const base = known ?? fallback
  return {
    error: {
      message: override.message ?? base.message,
      type: override.type ?? base.type,
      param: base.param ?? null,
      code: override.code ?? base.code,
    },
  }
}

/** The real 400 each dialect answers when the prompt does not fit the window. */
export function openaiContextOverflow(dialect: OpenAIDialect, window: number, requested: number) {
  if (dialect === 'deepseek') {
    const message = `This model's maximum context length is ${window} tokens. However, you requested ${requested} tokens (${requested} in the messages, 0 in the completion). Please reduce the length of the messages or completion.`
    return { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } }
  }
  const message = `This model's maximum context length is ${window} tokens. However, your messages resulted in ${requested} tokens. Please reduce the length of the messages.`
  return { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }
}

/** GET /models. */
export function openaiModels(models: string[], dialect: OpenAIDialect, created: number) {
  const owner = dialect === 'deepseek' ? 'deepseek' : 'system'
  return {
    object: 'list',
    data: models.map((id) =>
      dialect === 'deepseek'
        ? { id, object: 'model', owned_by: owner }
        : { id, object: 'model', created, owned_by: owner },
    ),
  }
}
