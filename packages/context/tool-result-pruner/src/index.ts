// The tool-result pruner (DESIGN §9; docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { shortenText, type CompactionInput } from '@dsh/compaction'
import type { Message } from '@dsh/llm'

export interface Config {
  minChars: number
  keepChars: number
  always: boolean
}

export const name = 'tool-result-pruner'
export const inject = ['compaction']

export const Config: Schema<Config> = Schema.object({
  minChars: Schema.natural().min(1).default(4000).description('A tool result with a text longer than this (characters) counts as oversized.'),
  keepChars: Schema.natural().min(1).default(1500).description('Characters an oversized text keeps: its head and its tail, with a note of what was cut.'),
  always: Schema.boolean().default(false).description('Prune every oversized result, even when the summary request fits without it (changes the cached prefix, so the provider cache misses).'),
})

function oversized(message: Message, minChars: number): boolean {
  return message.role === 'tool' && message.content.some((result) => result.content.some((block) => block.type === 'text' && block.text.length > minChars))
}

function prune(message: Message & { role: 'tool' }, config: Config): Message {
  const content = message.content.map((result) => ({
    ...result,
    content: result.content.map((block) => (block.type === 'text' && block.text.length > config.minChars ? { ...block, text: shortenText(block.text, config.keepChars) } : block)),
  }))
  return { role: 'tool', content }
}

/**
 * Shortens old oversized tool results, oldest first, in what a compaction summarizes, until the summary
 * request fits its budget: no model call, head and tail kept. The log keeps every result whole; the history
 * the model is sent keeps them too, because the fold (`deriveMessages`) has no event that shortens a result
 * in place (see README, Limitations). By default nothing is pruned when the request fits, so the summary
 * request repeats the session's prefix exactly and the provider's cache hits.
 */
export function apply(ctx: Context, config: Config) {
  ctx.on('compaction/prepare', async (input: CompactionInput, next) => {
    let total = input.estimate(input.messages)
    const messages = [...input.messages]
    for (let i = 0; i < messages.length && (config.always || total > input.budgetTokens); i++) {
      const message = messages[i]!
      if (message.role !== 'tool' || !oversized(message, config.minChars)) continue
      const shorter = prune(message, config)
      total += input.estimate([shorter]) - input.estimate([message])
      messages[i] = shorter
    }
    input.messages = messages
    return next()
  })
}
