import { createHash } from 'node:crypto'
import type { ToolCallBlock } from '@dsh/llm'
import { formatBytes } from '@dsh/tools'

/** What stands in the history for a long argument string: its size and hash; the log keeps it whole. */
export function argumentStub(text: string): string {
  const bytes = Buffer.byteLength(text)
  const sha256 = createHash('sha256').update(text).digest('hex')
  return `[left out of the history: ${formatBytes(bytes)} (${bytes} bytes), sha256 ${sha256}]`
}

export interface ShortenedArguments {
  arguments: unknown
  /** Characters left out (of the arguments' strings). */
  cut: number
}

/**
 * The call's arguments with every string over `minChars` (at any depth) replaced by `argumentStub`; the
 * keys, the short values and the shape stay, so the model still sees what the call did (which file, which
 * command). Raw unparseable arguments (a string) are stubbed whole. Undefined when nothing would change.
 */
export function shortenArguments(call: ToolCallBlock, minChars: number): ShortenedArguments | undefined {
  let cut = 0
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') {
      if (value.length <= minChars) return value
      const stub = argumentStub(value)
      if (stub.length >= value.length) return value
      cut += value.length - stub.length
      return stub
    }
    if (Array.isArray(value)) return value.map(walk)
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]))
    return value
  }
  const shorter = walk(call.arguments)
  return cut > 0 ? { arguments: shorter, cut } : undefined
}
