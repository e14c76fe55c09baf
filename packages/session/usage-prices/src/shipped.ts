import type { PriceTable } from '@dsh/usage-kit'

/**
 * USD per million tokens for the models the provider catalogs ship (llm-deepseek, llm-anthropic; llm-openai
 * ships no catalog models, so none are priced here). Taken 2026-12-01 from:
 * - Anthropic: https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing": base input, 5-minute
 *   cache writes, cache hits, output).
 * - DeepSeek: https://api-docs.deepseek.com/quick_start/pricing (cache-hit input, cache-miss input, output;
 *   V4 Pro at its price after the 2026-05-31 change, cache hits after the 2026-04-26 cut). That page was not
 *   reachable from the machine these were taken on: the figures are as three published copies of it (dated
 *   2026-04-30 to 2026-05-24) agree. DeepSeek charges no cache write, so none is set (a write would cost the
 *   input price).
 * Prices change: a user overrides a model in the `usage.prices` setting; a row overrides the table in config.
 */
export const SHIPPED_PRICES: PriceTable = {
  'anthropic/claude-opus-4-6': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 },
  'anthropic/claude-sonnet-4-6': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic/claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  'deepseek/deepseek-v4-flash': { input: 0.14, cachedInput: 0.0028, output: 0.28 },
  'deepseek/deepseek-v4-pro': { input: 0.435, cachedInput: 0.003625, output: 0.87 },
}
