import type { Message, ReasoningBlock, TextBlock, ToolCallBlock } from '@dsh/llm'

/**
 * Keeps the head and the tail of a long text with a note saying how much was cut, so a shortened text is
 * never mistaken for the whole (pruned tool results, over-long messages in a summary request).
 */
export function shortenText(text: string, keepChars: number, headShare = 0.6): string {
  if (text.length <= keepChars) return text
  const head = Math.max(0, Math.floor(keepChars * headShare))
  const tail = Math.max(0, keepChars - head)
  return `${text.slice(0, head)}\n[… ${text.length - head - tail} characters omitted …]\n${tail ? text.slice(text.length - tail) : ''}`
}

/**
 * A copy of `message` whose long texts (text, tool-result text, tool-call arguments) keep at most about
 * `keepChars` characters each, head and tail; long reasoning is left out. Images and short texts stay.
 */
export function shortenMessage(message: Message, keepChars: number): Message {
  const text = <B extends { text: string }>(block: B): B =>
    block.text.length > keepChars ? { ...block, text: shortenText(block.text, keepChars) } : block
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content.map((block) => (block.type === 'text' ? text(block) : block)) }
    case 'tool':
      return {
        role: 'tool',
        content: message.content.map((result) => ({
          ...result,
          content: result.content.map((block) => (block.type === 'text' ? text(block) : block)),
        })),
      }
    case 'assistant': {
      // Signed reasoning cannot be cut (the provider checks the signature): a long one is left out.
      const content = message.content.flatMap((block): (TextBlock | ReasoningBlock | ToolCallBlock)[] => {
        if (block.type === 'reasoning') return block.text.length > keepChars ? [] : [block]
        if (block.type === 'text') return [text(block)]
        const json = typeof block.arguments === 'string' ? block.arguments : JSON.stringify(block.arguments ?? {})
        return [json.length > keepChars ? { ...block, arguments: shortenText(json, keepChars) } : block]
      })
      return { role: 'assistant', content: content.length ? content : [{ type: 'text', text: '[reasoning left out]' }] }
    }
  }
}
