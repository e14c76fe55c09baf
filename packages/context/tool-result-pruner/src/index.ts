// The tool-result pruner (docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/compaction'
import type {} from '@dsh/spill'
import { ARGUMENTS_PRUNED_KIND } from '@dsh/session'
import { pruneHistory, type SpillHandle } from './live.ts'
import { pruneSummaryInput } from './summary.ts'

export { planPruning, pruneHistory, recentFrom, type PrunerOptions, type SpillHandle } from './live.ts'
export { shortenResult, type Shortened, type ShortenOptions } from './shorten.ts'
export { argumentStub, shortenArguments, type ShortenedArguments } from './arguments.ts'
export { pruneSummaryInput } from './summary.ts'

declare module '@dsh/session' {
  interface SessionEventMap {
    /**
     * From this event on, the model sees the call `callId` of the `assistant/message` at `seq` with these
     * arguments (long strings replaced by their size and sha256); the log keeps the call whole. Applied by
     * the fold of @dsh/session (`ARGUMENTS_PRUNED_KIND`).
     */
    'tool/arguments-pruned': { seq: number; callId: string; arguments: Record<string, unknown> | string; note?: string }
  }
}

function argumentsPrunedProblem(data: unknown): string | undefined {
  const value = data as Record<string, unknown>
  if (!value || typeof value !== 'object') return 'data must be an object'
  if (!Number.isInteger(value.seq) || (value.seq as number) < 0) return 'seq must be the seq of an assistant/message'
  if (typeof value.callId !== 'string' || !value.callId) return 'callId must name a call'
  if (
    typeof value.arguments !== 'string' &&
    (!value.arguments || typeof value.arguments !== 'object' || Array.isArray(value.arguments))
  )
    return 'arguments must be an object or a string'
  if (value.note !== undefined && typeof value.note !== 'string') return 'note must be a string'
  return undefined
}

export interface Config {
  minChars: number
  minArgumentChars: number
  keepChars: number
  keepRecentSteps: number
  live: boolean
  always: boolean
}

export const name = 'tool-result-pruner'
export const inject = ['compaction', 'sessions']

export const Config: Schema<Config> = Schema.object({
  minChars: Schema.natural()
    .min(1)
    .default(4000)
    .description('A tool result with a text longer than this (characters) counts as oversized.'),
  minArgumentChars: Schema.natural()
    .min(1)
    .default(32_000)
    .description(
      "A call's argument string longer than this (characters) is oversized: replaced by its size and sha256 when the history is relieved. Higher than minChars: what the model wrote (an edit, a file) is its own work and worth keeping in view longer than a result it can read again.",
    ),
  keepChars: Schema.natural()
    .min(1)
    .default(1500)
    .description('Characters an oversized text keeps: its head and its tail, with a note of what was cut.'),
  keepRecentSteps: Schema.natural()
    .default(3)
    .description('The tool results of this many latest steps are never pruned from the history the model is sent.'),
  live: Schema.boolean()
    .default(true)
    .description(
      'When a threshold compaction is due, shorten old oversized results in the history the model is sent instead (logged as `tool/pruned`), when that is enough to bring the session under the threshold.',
    ),
  always: Schema.boolean()
    .default(false)
    .description(
      'In a summary request, prune every oversized result, even when the request fits without it (changes the cached prefix, so the provider cache misses).',
    ),
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
  ctx.sessions.defineKind(ctx, ARGUMENTS_PRUNED_KIND, { ignorable: true, validate: argumentsPrunedProblem })
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
