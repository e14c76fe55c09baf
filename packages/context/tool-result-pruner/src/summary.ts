import { shortenText, type CompactionInput } from '@dsh/compaction'
import type { Message } from '@dsh/llm'
import { shortenResult, type ShortenOptions } from './shorten.ts'

type ToolMessage = Extract<Message, { role: 'tool' }>
type AssistantMessage = Extract<Message, { role: 'assistant' }>

function shorterResults(content: ToolMessage['content'], options: ShortenOptions): Message | undefined {
  let changed = false
  const results = content.map((result) => {
    const shorter = shortenResult(result.content, options)
    if (!shorter) return result
    changed = true
    return { ...result, content: shorter.content }
  })
  return changed ? { role: 'tool', content: results } : undefined
}

/**
 * A call's long arguments in what a summary reads: the JSON text cut head and tail (`shortenText`), the
 * shortening the compaction request check accepts for a call (`derivesText` of @dsh/invariants).
 */
function shorterCalls(
  content: AssistantMessage['content'],
  options: ShortenOptions & { minArgumentChars: number },
): Message | undefined {
  let changed = false
  const blocks = content.map((block) => {
    if (block.type !== 'tool-call') return block
    const json = typeof block.arguments === 'string' ? block.arguments : JSON.stringify(block.arguments ?? {})
    if (json.length <= options.minArgumentChars || json.length <= options.keepChars) return block
    changed = true
    return { ...block, arguments: shortenText(json, options.keepChars) }
  })
  return changed ? { role: 'assistant', content: blocks } : undefined
}

/**
 * Shortens oversized tool results and call arguments in what a summary reads, oldest first, until the summary request fits
 * its budget (or all of them, with `always`). The log and the live history are not touched.
 */
export function pruneSummaryInput(
  input: CompactionInput,
  options: ShortenOptions & { always: boolean; minArgumentChars: number },
): void {
  let total = input.estimate(input.messages)
  const messages = [...input.messages]
  for (let i = 0; i < messages.length && (options.always || total > input.budgetTokens); i++) {
    const message = messages[i]!
    const shorter =
      message.role === 'tool'
        ? shorterResults(message.content, options)
        : message.role === 'assistant'
          ? shorterCalls(message.content, options)
          : undefined
    if (!shorter) continue
    total += input.estimate([shorter]) - input.estimate([message])
    messages[i] = shorter
  }
  input.messages = messages
}
