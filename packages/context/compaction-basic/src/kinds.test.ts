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

test('compaction/start and compaction/end not of their schema are refused, naming the field', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const start = { trigger: 'manual' as const, fromSeq: 1, toSeq: 4, tokens: 100, window: 1000 }
  expect(() => session.append('compaction/start', { ...start, trigger: 'bored' as never })).toThrow(
    'data.trigger must be one of threshold, overflow, manual',
  )
  expect(() => session.append('compaction/start', { ...start, toSeq: -1 })).toThrow(
    'data.toSeq must be a whole number ≥ 0',
  )
  expect(() => session.append('compaction/start', { ...start, window: '1000' as never })).toThrow(
    'data.window must be a number',
  )
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }
  expect(() => session.append('compaction/end', { ok: 'yes' as never, requests: 1, usage })).toThrow(
    'data.ok must be a boolean',
  )
  expect(() => session.append('compaction/end', { ok: false, requests: 1, usage, code: 'OOPS' as never })).toThrow(
    'data.code must be one of NOTHING_TO_COMPACT',
  )
  expect(() =>
    session.append('compaction/end', { ok: true, requests: 1, usage: { ...usage, input: 'many' as never } }),
  ).toThrow('data.usage.input must be a number')
  expect(() =>
    session.append('compaction/end', {
      ok: true,
      requests: 1,
      usage,
      sections: [{ title: 'Goal', text: 'x', source: 'dream' as never }],
    }),
  ).toThrow('data.sections[0].source must be one of model, log, hook')
  // What the provider writes still passes.
  session.append('compaction/start', { ...start, focus: 'tests', maxOutputTokens: 512 })
  session.append('compaction/end', { ok: false, requests: 0, usage, code: 'ABORTED', reason: 'stopped' })
  expect(session.events.filter((event) => event.type.startsWith('compaction/')).map((event) => event.type)).toEqual([
    'compaction/start',
    'compaction/end',
  ])
})
