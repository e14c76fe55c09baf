import type { Message, ToolSchema } from '@dsh/llm'

/** How text becomes an estimated token count when no provider has counted it. */
export interface EstimateOptions {
  charsPerToken: number
  imageTokens: number
  messageOverheadTokens: number
}

export function estimateText(text: string, options: EstimateOptions): number {
  return Math.ceil(text.length / options.charsPerToken)
}

/** A message's estimated tokens: its text, reasoning, tool calls and results, images at a flat rate. */
export function estimateMessage(message: Message, options: EstimateOptions): number {
  let chars = 0
  let images = 0
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
      case 'reasoning':
        chars += block.text.length
        break
      case 'image':
        images++
        break
      case 'tool-call':
        chars +=
          block.name.length +
          (typeof block.arguments === 'string' ? block.arguments.length : JSON.stringify(block.arguments ?? {}).length)
        break
      case 'tool-result':
        for (const inner of block.content) {
          if (inner.type === 'text') chars += inner.text.length
          else images++
        }
        break
    }
  }
  return Math.ceil(chars / options.charsPerToken) + images * options.imageTokens + options.messageOverheadTokens
}

/** The system prompt and tool schemas, which every request carries before the history. */
export function estimateHeader(
  header: { system: string; tools: readonly ToolSchema[] },
  options: EstimateOptions,
): number {
  let chars = header.system.length
  for (const tool of header.tools)
    chars += tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length
  return Math.ceil(chars / options.charsPerToken)
}
