import type { CompactionInput } from '@dsh/compaction'
import type { Message } from '@dsh/llm'
import { shortenResult, type ShortenOptions } from './shorten.ts'

/**
 * Shortens oversized tool results in what a summary reads, oldest first, until the summary request fits
 * its budget (or all of them, with `always`). The log and the live history are not touched.
 */
export function pruneSummaryInput(input: CompactionInput, options: ShortenOptions & { always: boolean }): void {
  let total = input.estimate(input.messages)
  const messages = [...input.messages]
  for (let i = 0; i < messages.length && (options.always || total > input.budgetTokens); i++) {
    const message = messages[i]!
    if (message.role !== 'tool') continue
    let changed = false
    const content = message.content.map((result) => {
      const shorter = shortenResult(result.content, options)
      if (!shorter) return result
      changed = true
      return { ...result, content: shorter.content }
    })
    if (!changed) continue
    const shorter: Message = { role: 'tool', content }
    total += input.estimate([shorter]) - input.estimate([message])
    messages[i] = shorter
  }
  input.messages = messages
}
