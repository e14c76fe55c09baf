import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { SHIPPED_PRICES } from '@dsh/usage-prices'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

// Usage reaches the editor as ACP `usage_update`s, priced from the configured table, through the official client library.
const PRICE = { input: 2, cachedInput: 0.5, output: 8 }
let llm: MockServer
let agent: AgentProcess
let home: string
beforeAll(async () => {
  llm = await startMockServer()
  home = mkdtempSync(join(tmpdir(), 'dsh-acp-usage-'))
  writeFileSync(join(home, 'settings.yaml'), `usage.prices:\n  deepseek/deepseek-v4-flash: ${JSON.stringify(PRICE)}\n`)
  agent = await startAgent({
    patch: '[]\n',
    home,
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
  })
})
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
  if (home) rmSync(home, { recursive: true, force: true })
})

const usageUpdates = (updates: SessionUpdate[]) =>
  updates.filter(
    (update): update is Extract<SessionUpdate, { sessionUpdate: 'usage_update' }> =>
      update.sessionUpdate === 'usage_update',
  )

test('each answered request is a usage_update: the context it filled, the window, and the session cost at the configured price', async () => {
  const { sessionId } = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
  llm.enqueue(
    {
      toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'missing.txt' } }],
      usage: { input: 1000, cacheRead: 200, output: 30 },
    },
    { text: 'gone', usage: { input: 40, cacheRead: 1300, output: 5 } },
  )
  await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read it' }] })
  const updates = usageUpdates(agent.updates(sessionId))
  expect(updates.map((update) => [update.used, update.size])).toEqual([
    [1230, 1_000_000],
    [1345, 1_000_000],
  ])
  const cost = (1040 * PRICE.input + 1500 * PRICE.cachedInput + 35 * PRICE.output) / 1_000_000
  expect(updates[1]!.cost?.currency).toBe('USD')
  expect(updates[1]!.cost?.amount).toBeCloseTo(cost, 12)
  // The cache-hit share and what the cache saved, the session's and the turn's (one turn here: the same).
  const saved = (1500 * (PRICE.input - PRICE.cachedInput)) / 1_000_000
  const meta = updates[1]!._meta?.['dsh/usage'] as Record<string, any>
  expect(meta).toMatchObject({
    requests: 2,
    input: 1040,
    cacheRead: 1500,
    cacheWrite: 0,
    output: 35,
    unpriced: [],
    cacheHitShare: 1500 / 2540,
  })
  expect(meta.cacheSaved).toBeCloseTo(saved, 12)
  expect(meta.turn.cacheHitShare).toBe(1500 / 2540)
  expect(meta.turn.cacheSaved).toBeCloseTo(saved, 12)
  expect(meta.turn.cost).toBeCloseTo(cost, 12)
  expect(updates[0]!._meta!['dsh/usage']).toMatchObject({ cacheHitShare: 200 / 1200 })
})

test('a model the settings do not name is priced at its shipped price', async () => {
  const { sessionId } = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
  await agent.agent.request('session/set_config_option', {
    sessionId,
    configId: 'model',
    value: 'deepseek/deepseek-v4-pro',
  })
  llm.enqueue({ text: 'hi', usage: { input: 10_000, cacheRead: 50_000, output: 2_000 } })
  await agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })
  const [update] = usageUpdates(agent.updates(sessionId))
  const shipped = SHIPPED_PRICES['deepseek/deepseek-v4-pro']!
  expect(update!.cost?.amount).toBeCloseTo(
    (10_000 * shipped.input + 50_000 * shipped.cachedInput + 2_000 * shipped.output) / 1_000_000,
    12,
  )
  expect(update!._meta?.['dsh/usage']).toMatchObject({ requests: 1, unpriced: [] })
})
