import type { UsageSums } from '@dsh/web-protocol'
import { compact } from './format.ts'

/** `$0.0123`, or `no price` naming the models without one. */
export function costText(usage: Pick<UsageSums, 'cost' | 'unpriced'>): string {
  return usage.cost === null ? `no price (${usage.unpriced.join(', ')})` : `$${usage.cost.toFixed(4)}`
}

/** The one-line summary of the session header: tokens at a glance, the exact counts in its title. */
export function usageLine(usage: UsageSums): { text: string; title: string } {
  const inTokens = usage.input + usage.cacheRead + usage.cacheWrite
  return {
    text: `${compact(inTokens)} in${usage.cacheRead ? ` (${compact(usage.cacheRead)} cached)` : ''} · ${compact(usage.output)} out · ${usage.requests} req · ${costText(usage)}`,
    title: `${usage.requests} model requests: ${usage.input} uncached input, ${usage.cacheRead} cached input, ${usage.cacheWrite} cache-write, ${usage.output} output tokens (${usage.reasoning !== undefined ? `${usage.reasoning} of them reasoning` : 'reasoning included; the provider reports no separate count'}); ${costText(usage)}`,
  }
}
