import type { Effort, ImageBlock, LlmRequest, Message, ModelInfo, TextBlock } from '@dsh/llm'
import { imageAsText, imageData } from '@dsh/llm-kit'

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

type WireToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } }

export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Part[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

/** `reasoning_effort` as chat completions name it; no effort on the route sends none (the server default). */
export function effortFields(effort: Effort | undefined): Record<string, unknown> {
  if (!effort) return {}
  return { reasoning_effort: effort === 'off' ? 'none' : effort }
}

const imagePart = (block: ImageBlock): Part => ({
  type: 'image_url',
  image_url: { url: `data:${block.mediaType};base64,${imageData(block)}` },
})

function userContent(blocks: (TextBlock | ImageBlock)[], model: ModelInfo): string | Part[] {
  if (!model.images || blocks.every((block) => block.type === 'text')) {
    return blocks.map((block) => (block.type === 'text' ? block.text : imageAsText(block, model))).join('\n\n')
  }
  return blocks.map((block) => (block.type === 'text' ? { type: 'text' as const, text: block.text } : imagePart(block)))
}

const stringifyArguments = (args: unknown) => (typeof args === 'string' ? args : JSON.stringify(args ?? {}))

/**
 * Our messages in the chat-completions format. Reasoning is not sent back (the format has no field for it);
 * tool calls that never got a result (a cut stream) are left out, or the server would refuse the history.
 */
export function toWireMessages(request: LlmRequest, model: ModelInfo): WireMessage[] {
  const out: WireMessage[] = []
  if (request.system) out.push({ role: 'system', content: request.system })
  const answered = new Set<string>()
  for (const message of request.messages)
    if (message.role === 'tool') for (const block of message.content) answered.add(block.callId)
  for (const message of request.messages as Message[]) {
    if (message.role === 'user') out.push({ role: 'user', content: userContent(message.content, model) })
    else if (message.role === 'tool') {
      // Tool messages carry text only in this format.
      for (const block of message.content)
        out.push({
          role: 'tool',
          tool_call_id: block.callId,
          content: block.content
            .map((part) => (part.type === 'text' ? part.text : imageAsText(part, { ...model, images: false })))
            .join('\n\n'),
        })
    } else {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
      const calls = message.content.flatMap((block) =>
        block.type === 'tool-call' && answered.has(block.callId)
          ? [
              {
                id: block.callId,
                type: 'function' as const,
                function: { name: block.name, arguments: stringifyArguments(block.arguments) },
              },
            ]
          : [],
      )
      if (!text && !calls.length) continue
      out.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) })
    }
  }
  return out
}

/** The streaming request body: only what the API needs. */
export function requestBody(request: LlmRequest, model: ModelInfo) {
  const body: Record<string, unknown> = {
    model: request.route.model,
    messages: toWireMessages(request, model),
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
    // The API refuses a tool_choice without tools.
    if (request.toolChoice) body.tool_choice = request.toolChoice
  }
  if (request.maxOutputTokens) body.max_completion_tokens = request.maxOutputTokens
  if (request.temperature !== undefined) body.temperature = request.temperature
  return { ...body, ...effortFields(request.route.effort) }
}
