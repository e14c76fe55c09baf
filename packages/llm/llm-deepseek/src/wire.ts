import type { Effort, ImageBlock, LlmRequest, Message, ModelInfo, TextBlock } from '@dsh/llm'
import { imageAsText, imageData } from '@dsh/llm-kit'

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

export interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Part[] }
  | { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

/**
 * DeepSeek's documented controls (guides/thinking_mode): `thinking.type` switches thinking on or off and
 * `reasoning_effort` (low | high | max) sets its depth. No effort on the route sends neither: the API default.
 */
export function effortFields(effort: Effort | undefined): Record<string, unknown> {
  if (!effort) return {}
  if (effort === 'off') return { thinking: { type: 'disabled' } }
  return { thinking: { type: 'enabled' }, reasoning_effort: effort }
}

const imagePart = (block: ImageBlock): Part => ({
  type: 'image_url',
  image_url: { url: `data:${block.mediaType};base64,${imageData(block)}` },
})

function userContent(blocks: (TextBlock | ImageBlock)[], model: ModelInfo): string | Part[] {
  if (!model.images || blocks.every((block) => block.type === 'text')) {
    return blocks.map((block) => (block.type === 'text' ? block.text : imageAsText(block, model))).join('\n\n')
  }
  return blocks.map((block) => (block.type === 'text' ? { type: 'text', text: block.text } : imagePart(block)))
}

function toolText(blocks: (TextBlock | ImageBlock)[], model: ModelInfo): string {
  // Tool messages carry text only in this API.
  return blocks
    .map((block) => (block.type === 'text' ? block.text : imageAsText(block, { ...model, images: false })))
    .join('\n\n')
}

/** Tool calls that never got a result (a cut stream) would make the API refuse the whole history. */
function answeredCalls(messages: Message[]): Set<string> {
  const answered = new Set<string>()
  for (const message of messages)
    if (message.role === 'tool') for (const block of message.content) answered.add(block.callId)
  return answered
}

export const stringifyArguments = (args: unknown) => (typeof args === 'string' ? args : JSON.stringify(args ?? {}))

/**
 * Our messages in DeepSeek's chat format. Reasoning this provider produced goes back as `reasoning_content`
 * on its assistant message (the API requires it after tool calls); reasoning of other providers is dropped.
 */
export function toWireMessages(request: LlmRequest, model: ModelInfo, provider: string): WireMessage[] {
  const out: WireMessage[] = []
  if (request.system) out.push({ role: 'system', content: request.system })
  const answered = answeredCalls(request.messages)
  for (const message of request.messages) {
    if (message.role === 'user') out.push({ role: 'user', content: userContent(message.content, model) })
    else if (message.role === 'tool')
      for (const block of message.content)
        out.push({ role: 'tool', tool_call_id: block.callId, content: toolText(block.content, model) })
    else {
      let text = ''
      let reasoning = ''
      const calls: WireToolCall[] = []
      for (const block of message.content) {
        if (block.type === 'text') text += block.text
        else if (block.type === 'reasoning') reasoning += block.provider === provider ? block.text : ''
        else if (answered.has(block.callId))
          calls.push({
            id: block.callId,
            type: 'function',
            function: { name: block.name, arguments: stringifyArguments(block.arguments) },
          })
      }
      // Reasoning alone (a stream cut while thinking) is no message: the API needs content or calls.
      if (!text && !calls.length) continue
      const wire: WireMessage = { role: 'assistant', content: text || null }
      if (reasoning) wire.reasoning_content = reasoning
      if (calls.length) wire.tool_calls = calls
      out.push(wire)
    }
  }
  return out
}

/** The whole request body: only what the API needs. */
export function requestBody(request: LlmRequest, model: ModelInfo, provider: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.route.model,
    messages: toWireMessages(request, model, provider),
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
    if (request.toolChoice) body.tool_choice = request.toolChoice
  }
  if (request.maxOutputTokens) body.max_tokens = request.maxOutputTokens
  if (request.temperature !== undefined) body.temperature = request.temperature
  return { ...body, ...effortFields(request.route.effort) }
}
