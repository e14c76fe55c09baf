// The tool-result pruner (DESIGN §9; docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/compaction'
import type {} from '@dsh/spill'
import { pruneHistory, type SpillHandle } from './live.ts'
import { pruneSummaryInput } from './summary.ts'

export { planPruning, pruneHistory, recentFrom, type PrunerOptions, type SpillHandle } from './live.ts'
export { shortenResult, type Shortened, type ShortenOptions } from './shorten.ts'
export { pruneSummaryInput } from './summary.ts'

export interface Config {
  minChars: number
  keepChars: number
  keepRecentSteps: number
  live: boolean
  always: boolean
}

export const name = 'tool-result-pruner'
export const inject = ['compaction']

export const Config: Schema<Config> = Schema.object({
  minChars: Schema.natural().min(1).default(4000).description('A tool result with a text longer than this (characters) counts as oversized.'),
  keepChars: Schema.natural().min(1).default(1500).description('Characters an oversized text keeps: its head and its tail, with a note of what was cut.'),
  keepRecentSteps: Schema.natural().default(3).description('The tool results of this many latest steps are never pruned from the history the model is sent.'),
  live: Schema.boolean()
    .default(true)
    .description(
      'When a threshold compaction is due, shorten old oversized results in the history the model is sent instead (logged as `tool/pruned`), when that is enough to bring the session under the threshold.',
    ),
  always: Schema.boolean()
    .default(false)
    .description('In a summary request, prune every oversized result, even when the request fits without it (changes the cached prefix, so the provider cache misses).'),
})

/**
 * The file that keeps a recent result whole once it is shortened: the one its producer saved (spill-policy
 * or a command past its cap), else a new spill of the logged text; none without a spill store.
 */
function spillHandle(ctx: Context, sessionId: string): SpillHandle | undefined {
  const store = ctx.get('spillStore')
  if (!store) return undefined
  return async (result) => {
    const saved = await store.saved(sessionId, result.callId, { headBytes: 0, tailBytes: 0 })
    if (saved) return saved.path
    const text = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
    return store.write({ sessionId, callId: result.callId, tool: 'tool-result', text }).then(
      (spilled) => spilled.path,
      () => undefined, // the view then says to run the tool again
    )
  }
}

/**
 * Shortens old oversized tool results, head and tail kept, with no model call. On `compaction/relieve` (a
 * threshold was passed) it logs `tool/pruned` for the oldest of them, as many as bring the session under the
 * threshold, so no summary is needed: the model sees them shorter from then on, the log keeps them whole.
 * When pruning cannot do it, it logs nothing and the summary reads the history as the provider cached it.
 * On `compaction/prepare` it shortens what a summary reads until the summary request fits its budget (by
 * default nothing when it fits, so the request repeats the session's cached prefix).
 */
export function apply(ctx: Context, config: Config) {
  if (config.live) {
    ctx.on('compaction/relieve', async (input, next) => {
      await pruneHistory(input, config, spillHandle(ctx, input.agent.session.id))
      return next()
    })
  }
  ctx.on('compaction/prepare', async (input, next) => {
    pruneSummaryInput(input, config)
    return next()
  })
}
