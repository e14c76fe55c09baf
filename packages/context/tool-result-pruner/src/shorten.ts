import { shortenText } from '@dsh/compaction'
import type { ToolResultBlock } from '@dsh/llm'

export interface ShortenOptions {
  minChars: number
  keepChars: number
}

export interface Shortened {
  content: ToolResultBlock['content']
  /** Characters left out, over all of the result's texts. */
  cut: number
  /** Characters of the result's texts before. */
  total: number
}

/**
 * The result's content with each text over `minChars` cut to its head and tail (`keepChars` in all, a
 * marker saying how much is missing between them); images stay. Undefined when nothing would be cut.
 */
export function shortenResult(content: ToolResultBlock['content'], options: ShortenOptions): Shortened | undefined {
  let cut = 0
  let total = 0
  const shorter = content.map((block) => {
    if (block.type !== 'text') return block
    total += block.text.length
    if (block.text.length <= options.minChars || block.text.length <= options.keepChars) return block
    cut += block.text.length - options.keepChars
    return { ...block, text: shortenText(block.text, options.keepChars) }
  })
  return cut > 0 ? { content: shorter, cut, total } : undefined
}
