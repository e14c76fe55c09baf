import type { Effort, ImageBlock, LlmRequest, Message, ModelInfo, TextBlock } from '@dsh/llm'
import { imageAsText, imageData } from '@dsh/llm-kit'

type Block = Record<string, unknown> & { type: string }
export interface WireMessage {
  role: 'user' | 'assistant'
  content: Block[]
}

/** Off disables thinking; other efforts ask for adaptive thinking at that effort. No effort sends neither. */
export function effortFields(effort: Effort | undefined): Record<string, unknown> {
  if (!effort) return {}
  if (effort === 'off') return { thinking: { type: 'disabled' } }
  return { thinking: { type: 'adaptive' }, output_config: { effort } }
}

function image(block: ImageBlock, model: ModelInfo): Block {
  if (!model.images) return { type: 'text', text: imageAsText(block, model) }
  return { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: imageData(block) } }
}

const parts = (blocks: (TextBlock | ImageBlock)[], model: ModelInfo): Block[] =>
  blocks.flatMap((block) =>
    block.type === 'text' ? (block.text ? [{ type: 'text', text: block.text }] : []) : [image(block, model)],
  )

/** Tool input must be an object; arguments the model garbled (kept raw in the log) are sent as none. */
const toolInput = (args: unknown) => (args && typeof args === 'object' && !Array.isArray(args) ? args : {})

function assistantBlocks(
  message: Extract<Message, { role: 'assistant' }>,
  provider: string,
  answered: Set<string>,
): Block[] {
  const out: Block[] = []
  for (const block of message.content) {
    if (block.type === 'reasoning') {
      // Thinking goes back only to the provider that signed it: another provider's reasoning cannot be verified.
      if (block.provider !== provider) continue
      if (block.redacted) out.push({ type: 'redacted_thinking', data: block.redacted })
      else if (block.signature) out.push({ type: 'thinking', thinking: block.text, signature: block.signature })
    } else if (block.type === 'text') {
      if (block.text) out.push({ type: 'text', text: block.text })
    } else if (answered.has(block.callId)) {
      out.push({ type: 'tool_use', id: block.callId, name: block.name, input: toolInput(block.arguments) })
    }
  }
  // Thinking alone (a stream cut while thinking) is no answer the API accepts.
  return out.some((block) => block.type === 'text' || block.type === 'tool_use') ? out : []
}

/**
 * Our messages as Anthropic messages: tool results ride in user messages, consecutive messages of one role
 * are merged (the API alternates roles), tool calls that never got a result are left out.
 */
export function toWireMessages(request: LlmRequest, model: ModelInfo, provider: string): WireMessage[] {
  const answered = new Set<string>()
  for (const message of request.messages)
    if (message.role === 'tool') for (const block of message.content) answered.add(block.callId)
  const out: WireMessage[] = []
  const push = (role: WireMessage['role'], content: Block[]) => {
    if (!content.length) return
    const last = out.at(-1)
    if (last?.role === role) last.content.push(...content)
    else out.push({ role, content })
  }
  for (const message of request.messages) {
    if (message.role === 'user') push('user', parts(message.content, model))
    else if (message.role === 'assistant') push('assistant', assistantBlocks(message, provider, answered))
    else {
      push(
        'user',
        message.content.map((block) => ({
          type: 'tool_result',
          tool_use_id: block.callId,
          content: parts(block.content, model),
          ...(block.isError ? { is_error: true } : {}),
        })),
      )
    }
  }
  return out
}

export function requestBody(
  request: LlmRequest,
  model: ModelInfo,
  provider: string,
  options: { maxOutputTokens: number; promptCache: boolean },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.route.model,
    max_tokens: request.maxOutputTokens ?? model.maxOutputTokens ?? options.maxOutputTokens,
    messages: toWireMessages(request, model, provider),
    stream: true,
  }
  if (request.system) body.system = request.system
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }))
    // Anthropic.ToolChoiceAuto / ToolChoiceNone: an object with a type.
    if (request.toolChoice) body.tool_choice = { type: request.toolChoice }
  }
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (options.promptCache) body.cache_control = { type: 'ephemeral' }
  return { ...body, ...effortFields(request.route.effort) }
}
