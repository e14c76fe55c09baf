// The price table in a booted composition: shipped prices for every catalog model, per-model overrides from
// settings.yaml, and the cost of a scripted run as tokens × the configured prices.
import { afterEach, expect, test } from 'vitest'
import { Config as AnthropicConfig } from '@dsh/llm-anthropic'
import { Config as DeepSeekConfig } from '@dsh/llm-deepseek'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { sessionUsage } from '@dsh/usage-kit'
import { SHIPPED_PRICES } from './index.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

test('every model the DeepSeek and Anthropic catalogs ship has a shipped price, and nothing else is priced', async () => {
  const catalog = [
    ...DeepSeekConfig({} as DeepSeekConfig).models.map((model) => `deepseek/${model.id}`),
    ...AnthropicConfig({} as AnthropicConfig).models.map((model) => `anthropic/${model.id}`),
  ]
  h = await bootComposition()
  const table = h.root.usagePrices.table()
  expect(Object.keys(table).sort()).toEqual(catalog.sort())
  expect(table).toEqual(SHIPPED_PRICES)
})

test('a model set in usage.prices replaces its shipped price only; the others stay shipped', async () => {
  h = await bootComposition({
    homeFiles: {
      'settings.yaml':
        'usage.prices:\n  deepseek/deepseek-v4-flash: { input: 9, cachedInput: 1, output: 20 }\n  local/qwen: { input: 0, cachedInput: 0, output: 0 }\n',
    },
  })
  const table = h.root.usagePrices.table()
  expect(table['deepseek/deepseek-v4-flash']).toEqual({ input: 9, cachedInput: 1, output: 20 })
  expect(table['local/qwen']).toEqual({ input: 0, cachedInput: 0, output: 0 })
  expect(table['anthropic/claude-sonnet-4-6']).toEqual(SHIPPED_PRICES['anthropic/claude-sonnet-4-6'])
})

test('a negative price in settings.yaml fails loudly, naming the file', async () => {
  await expect(
    bootComposition({
      homeFiles: {
        'settings.yaml': 'usage.prices:\n  deepseek/deepseek-v4-flash: { input: -1, cachedInput: 0, output: 0 }\n',
      },
    }),
  ).rejects.toThrow(/settings\.yaml/)
})

test('the cost of a scripted run is its logged tokens × the configured prices', async () => {
  const price = { input: 3, cachedInput: 0.25, cacheWrite: 4, output: 12 }
  h = await bootComposition({
    patch: scriptedPatch({ fixtureTools: true }),
    homeFiles: { 'settings.yaml': `usage.prices:\n  scripted/scripted-1: ${JSON.stringify(price)}\n` },
  })
  h.root.scriptedLlm.enqueue(
    {
      toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'hi' } }],
      usage: { input: 1200, cacheRead: 300, cacheWrite: 40, output: 70 },
    },
    { text: 'done', usage: { input: 25, cacheRead: 1500, cacheWrite: 0, output: 9 } },
  )
  await h.run('echo hi, then stop')
  const usage = sessionUsage(h.events(), h.root.usagePrices.table())
  expect(usage).toMatchObject({ requests: 2, input: 1225, cacheRead: 1800, cacheWrite: 40, output: 79, unpriced: [] })
  expect(usage.cost).toBeCloseTo((1225 * 3 + 1800 * 0.25 + 40 * 4 + 79 * 12) / 1_000_000, 15)
})
