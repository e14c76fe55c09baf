import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/compaction'

// The compaction kinds checked on append and load are declared by their schemas (issue #28.6).
let h: Harness
afterEach(async () => h?.dispose())

test('compaction kinds not of their schema are refused, naming the field', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const window = { provider: 'p', model: 'm', contextWindow: 0, source: 'provider-error' as const, text: 'too long' }
  expect(() => session.append('context/window', window)).toThrow('data.contextWindow must be a whole number ≥ 1')
  expect(() => session.append('context/window', { ...window, contextWindow: 8, source: 'catalog' as never })).toThrow(
    'data.source must be "provider-error"',
  )
  expect(() =>
    session.append('context/relief-failed', {
      trigger: 'sometimes' as never,
      tried: [],
      tokens: 1,
      targetTokens: 1,
      reason: 'r',
    }),
  ).toThrow('data.trigger must be one of threshold, overflow, manual')
  expect(() => session.append('compaction/requested', { focus: 3 as never })).toThrow('data.focus must be a string')
  expect(session.events.filter((event) => event.type !== 'runtime/context')).toEqual([])
})
