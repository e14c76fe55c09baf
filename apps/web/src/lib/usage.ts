import type { UsageSums } from '@dsh/web-protocol'
import { compact } from './format.ts'

/** `$0.0123`, or `no price` naming the models without one. */
export function costText(usage: Pick<UsageSums, 'cost' | 'unpriced'>): string {
  return usage.cost === null ? `no price (${usage.unpriced.join(', ')})` : `$${usage.cost.toFixed(4)}`
}

/** `73% cached, saved $0.0040`: the prompt cache's share of the input and its money; empty with no input. */
export function cacheText(usage: Pick<UsageSums, 'cacheHitShare' | 'cacheSaved'>): string {
  if (usage.cacheHitShare === null || usage.cacheHitShare === undefined) return ''
  const saved =
    usage.cacheSaved === null || usage.cacheSaved === undefined ? '' : `, saved $${usage.cacheSaved.toFixed(4)}`
  return `${Math.round(usage.cacheHitShare * 100)}% cached${saved}`
}

/** The one-line summary of the session header: tokens at a glance, the exact counts in its title. */
export function usageLine(usage: UsageSums & { turn?: UsageSums }): { text: string; title: string } {
  const inTokens = usage.input + usage.cacheRead + usage.cacheWrite
  const cache = cacheText(usage)
  const turn = usage.turn ? cacheText(usage.turn) : ''
  return {
    text: `${compact(inTokens)} in${usage.cacheRead ? ` (${compact(usage.cacheRead)} cached)` : ''} · ${compact(usage.output)} out · ${usage.requests} req · ${costText(usage)}${cache ? ` · ${cache}` : ''}${turn ? ` (last turn ${turn}, ${costText(usage.turn!)})` : ''}`,
    title: `${usage.requests} model requests: ${usage.input} uncached input, ${usage.cacheRead} cached input, ${usage.cacheWrite} cache-write, ${usage.output} output tokens (${usage.reasoning !== undefined ? `${usage.reasoning} of them reasoning` : 'reasoning included; the provider reports no separate count'}); ${costText(usage)}`,
  }
}
