import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { LlmError, type LlmErrorCode } from '@dsh/llm'
import { backoffMs, Config, decide } from './index.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

async function boot(
  script: ScriptedResponse[],
  retry = '{ baseDelayMs: 5, maxDelayMs: 20 }',
  options: { home?: string } = {},
) {
  h = await bootComposition({ patch: scriptedPatch({}, `- id: llm-retry\n  config: ${retry}\n`), ...options })
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const fail = (code: LlmErrorCode, retryAfterMs?: number): ScriptedResponse => ({
  error: { code, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
})
const retries = () => h!.events('llm/retry').map((event) => event.data)

describe('llm-retry', () => {
  test.each(['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT'] as const)(
    '%s is retried and the turn completes',
    async (code) => {
      await boot([fail(code), { text: 'recovered' }])
      const result = await h!.run('go')
      expect(result).toMatchObject({ reason: 'completed', text: 'recovered' })
      expect(retries()).toEqual([
        { attempt: 1, maxRetries: 4, code, delayMs: expect.any(Number), reason: expect.stringContaining(code) },
      ])
      expect(h!.root.scriptedLlm.requests).toHaveLength(2)
    },
  )

  test('an empty response is retried', async () => {
    await boot([{}, { text: 'something this time' }])
    expect((await h!.run('go')).reason).toBe('completed')
    expect(retries().map((retry) => retry.code)).toEqual(['EMPTY_RESPONSE'])
  })

  test.each(['AUTH', 'QUOTA', 'INVALID_REQUEST', 'CREDENTIAL_MISSING', 'UNSUPPORTED'] as const)(
    '%s is never retried',
    async (code) => {
      await boot([fail(code), { text: 'must not be asked for' }])
      const result = await h!.run('go')
      expect(result.error?.code).toBe(code)
      expect(retries()).toEqual([])
      expect(h!.root.scriptedLlm.requests).toHaveLength(1)
    },
  )

  test('CONTEXT_WINDOW_EXCEEDED is left to context management, never retried unchanged', async () => {
    await boot([fail('CONTEXT_WINDOW_EXCEEDED'), { text: 'must not be asked for unchanged' }])
    await h!.run('go')
    expect(retries()).toEqual([])
    const failure = {
      agent: await h!.agent(),
      error: new LlmError('CONTEXT_WINDOW_EXCEEDED', 'too long'),
      attempt: 0,
      request: h!.root.scriptedLlm.requests[0]! as never,
    }
    expect(decide(Config({} as Config), failure)).toBeUndefined()
  })

  test('the wait the provider asked for (Retry-After) is honoured instead of the backoff', async () => {
    await boot([fail('RATE_LIMIT', 150), { text: 'ok' }], '{ baseDelayMs: 1, maxDelayMs: 1 }')
    const started = Date.now()
    await h!.run('go')
    expect(Date.now() - started).toBeGreaterThanOrEqual(150)
    expect(retries()).toEqual([
      {
        attempt: 1,
        maxRetries: 4,
        code: 'RATE_LIMIT',
        delayMs: 150,
        reason: 'RATE_LIMIT: the provider asked to wait 150 ms',
      },
    ])
  })

  test('it gives up after maxRetries and the turn ends with the last failure', async () => {
    await boot(
      [fail('SERVER'), fail('SERVER'), fail('SERVER'), { text: 'too late' }],
      '{ maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 }',
    )
    const result = await h!.run('go')
    expect(result.error?.code).toBe('SERVER')
    expect(retries().map((retry) => [retry.attempt, retry.maxRetries])).toEqual([
      [1, 2],
      [2, 2],
    ])
    expect(h!.root.scriptedLlm.requests).toHaveLength(3)
  })

  test('a Retry-After longer than maxRetryAfterMs ends the turn instead of hanging', async () => {
    await boot([fail('RATE_LIMIT', 60_000), { text: 'not asked' }], '{ maxRetryAfterMs: 1000 }')
    const started = Date.now()
    const result = await h!.run('go')
    expect(result.error?.code).toBe('RATE_LIMIT')
    expect(Date.now() - started).toBeLessThan(30_000) // the Retry-After asks for 60 s
    expect(retries()).toEqual([])
  })

  test('a log with llm/retry events still loads where the plugin is not mounted', async () => {
    const home = tempDir('dsh-retry-home-')
    await boot([fail('SERVER'), { text: 'ok' }], undefined, { home })
    await h!.run('go')
    const id = (await h!.agent()).session.id
    await h!.dispose()
    h = await bootComposition({ home, patch: scriptedPatch({}, '- id: llm-retry\n  disabled: true\n') })
    const agent = await h.root.agents.resume(id)
    expect(agent.session.events.filter((event) => event.type === 'llm/retry')).toHaveLength(1)
    await agent.dispose()
  })
})

test('an llm/retry not of its schema is refused, naming the field', async () => {
  await boot([])
  const session = (await h!.agent()).session
  const retry = { attempt: 1, maxRetries: 4, code: 'SERVER' as const, delayMs: 5, reason: 'SERVER: retry 1 of 4' }
  expect(() => session.append('llm/retry', { ...retry, code: 'SOMETIMES' as never })).toThrow(
    'data.code must be one of ',
  )
  expect(() => session.append('llm/retry', { ...retry, attempt: 0 })).toThrow('data.attempt must be a whole number ≥ 1')
  const { maxRetries: _, ...older } = retry // as logs before maxRetries existed: refused on append, read on load
  expect(() => session.append('llm/retry', older as never)).toThrow('data.maxRetries must be a whole number ≥ 0')
  expect(session.events.filter((event) => event.type === 'llm/retry')).toEqual([])
})

describe('backoffMs', () => {
  const config = Config({ baseDelayMs: 100, maxDelayMs: 1000, jitter: 0.5 } as Partial<Config> as Config)

  test('doubles from the base, is capped, and jitter only takes time off', () => {
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffMs(config, retry, undefined, () => 0))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ])
    expect(backoffMs(config, 2, undefined, () => 1)).toBe(200)
    expect(backoffMs(config, 2, undefined, () => 0.5)).toBe(300)
  })

  test('a provider wait wins over the computed one', () => {
    expect(backoffMs(config, 5, 7, () => 0)).toBe(7)
  })
})
