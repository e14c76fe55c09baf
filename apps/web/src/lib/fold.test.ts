import { expect, test } from 'vitest'
import type { WireEvent } from '@dsh/web-protocol'
import { fold } from './fold.ts'

const log = (...entries: [string, unknown][]): WireEvent[] =>
  entries.map(([type, data], seq) => ({ type, seq, time: seq * 10, data }))
const usage = { input: 10, output: 5, cacheRead: 20, cacheWrite: 0 }

test('stream chunks show as one growing answer until the message replaces it', () => {
  const streaming = log(
    ['turn/start', { turnId: 't' }],
    ['step/start', {}],
    ['user/message', { content: [{ type: 'text', text: 'hi' }], source: 'user' }],
    ['assistant/chunk', { kind: 'reasoning', text: 'let me ' }],
    ['assistant/chunk', { kind: 'reasoning', text: 'think' }],
    ['assistant/chunk', { kind: 'text', text: 'Hel' }],
  )
  const live = fold(streaming)
  expect(live.openTurn).toBe(true)
  expect(live.items.at(-1)).toMatchObject({
    kind: 'assistant',
    reasoning: 'let me think',
    text: 'Hel',
    streaming: true,
  })
  const message: WireEvent = {
    type: 'assistant/message',
    seq: 6,
    time: 60,
    data: {
      content: [
        { type: 'reasoning', text: 'let me think' },
        { type: 'text', text: 'Hello' },
      ],
      usage,
      finish: 'stop',
    },
  }
  const done = fold([...streaming, message])
  expect(done.items.filter((item) => item.kind === 'assistant')).toEqual([
    expect.objectContaining({ text: 'Hello', streaming: false, key: 'a3' }),
  ])
})

test('a tool call gathers its approval, its decision and its result', () => {
  const folded = fold(
    log(
      ['turn/start', { turnId: 't' }],
      ['tool/call', { callId: 'c1', name: 'bash', arguments: { command: 'rm -rf build' } }],
      [
        'approval/asked',
        { requestId: 'r1', callId: 'c1', tool: 'bash', summary: 'bash: rm -rf build', reason: 'outside the sandbox' },
      ],
      ['approval/decided', { requestId: 'r1', answer: 'allow_once', by: 'user' }],
      ['tool/dispatched', { callId: 'c1' }],
      ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'removed' }] }],
      ['assistant/message', { content: [], usage, finish: 'stop' }],
      ['turn/end', { turnId: 't', reason: 'completed' }],
    ),
  )
  expect(folded.items[0]).toMatchObject({
    kind: 'tool',
    name: 'bash',
    status: 'done',
    output: 'removed',
    approval: { requestId: 'r1', decided: { answer: 'allow_once', by: 'user' } },
  })
  expect(folded.pendingApprovals).toEqual([])
  expect(folded.items[1]).toMatchObject({ kind: 'turn-end', reason: 'completed', usage, startedAt: 0, endedAt: 70 })
})

test('an approval still waiting is listed as pending', () => {
  const folded = fold(
    log(
      ['tool/call', { callId: 'c', name: 'write', arguments: {} }],
      ['approval/asked', { requestId: 'r', callId: 'c', tool: 'write', summary: 'write x', reason: 'why' }],
    ),
  )
  expect(folded.pendingApprovals).toEqual([
    { requestId: 'r', callId: 'c', tool: 'write', summary: 'write x', reason: 'why' },
  ])
})

test('a result whose call is on an unloaded page still shows, and unknown kinds are skipped', () => {
  const folded = fold(
    log(['tool/result', { callId: 'gone', content: [{ type: 'text', text: 'ok' }] }], ['someone/else', { x: 1 }]),
  )
  expect(folded.items).toEqual([
    expect.objectContaining({ kind: 'tool', callId: 'gone', status: 'done', output: 'ok' }),
  ])
})

test('route and preset switches become notices and set the current values', () => {
  const folded = fold(
    log(
      ['model/route', { route: { provider: 'deepseek', model: 'deepseek-v4-pro', effort: 'high' } }],
      ['permission/preset', { preset: 'read-only', mode: 'read-only', approval: 'ask' }],
      ['sandbox/mode', { mode: 'read-only' }],
      ['approval/policy', { policy: 'ask' }],
    ),
  )
  expect(folded.route).toEqual({ provider: 'deepseek', model: 'deepseek-v4-pro', effort: 'high' })
  expect(folded.preset).toBe('read-only')
  expect(folded.items.map((item) => (item.kind === 'notice' ? item.text : item.kind))).toEqual([
    'Model: deepseek/deepseek-v4-pro · high effort',
    'Permissions: read-only (sandbox read-only, approvals ask)',
  ])
})

test('a failed request shows its error once, on the answer, not again on the turn end', () => {
  const error = { code: 'AUTH', message: 'DeepSeek answered HTTP 401' }
  const folded = fold(
    log(
      ['turn/start', { turnId: 't' }],
      ['assistant/message', { content: [], usage, finish: 'error', error }],
      ['turn/end', { turnId: 't', reason: 'error', error }],
    ),
  )
  expect(folded.items.map((item) => [item.kind, 'error' in item ? item.error : undefined])).toEqual([
    ['assistant', error],
    ['turn-end', undefined],
  ])
})

test('a retried request shows a muted notice counting the retries instead of the error it recovered from', () => {
  const error = { code: 'SERVER', message: 'DeepSeek answered HTTP 500' }
  const folded = fold(
    log(
      ['turn/start', { turnId: 't' }],
      ['assistant/message', { content: [], usage, finish: 'error', error }],
      ['llm/retry', { attempt: 1, maxRetries: 4, code: 'SERVER', delayMs: 2000, reason: 'SERVER failed' }],
      ['assistant/message', { content: [{ type: 'text', text: 'Recovered.' }], usage, finish: 'stop' }],
      ['turn/end', { turnId: 't', reason: 'completed' }],
    ),
  )
  expect(
    folded.items.map((item) =>
      item.kind === 'notice' ? [item.tone, item.text] : [item.kind, 'error' in item ? item.error : undefined],
    ),
  ).toEqual([
    ['muted', 'Model request failed (SERVER); retrying in 2 s — retry 1 of 4'],
    ['assistant', undefined],
    ['turn-end', undefined],
  ])
})

test('a retry the provider timed keeps the partial answer and says the wait it asked for', () => {
  const folded = fold(
    log(
      ['assistant/chunk', { kind: 'text', text: 'Half an ans' }],
      [
        'assistant/message',
        {
          content: [{ type: 'text', text: 'Half an ans' }],
          usage,
          finish: 'error',
          error: { code: 'RATE_LIMIT', message: 'slow down' },
        },
      ],
      [
        'llm/retry',
        {
          attempt: 2,
          maxRetries: 4,
          code: 'RATE_LIMIT',
          delayMs: 250,
          reason: 'RATE_LIMIT: the provider asked to wait 250 ms',
        },
      ],
    ),
  )
  expect(folded.items).toEqual([
    expect.objectContaining({ kind: 'assistant', text: 'Half an ans', error: undefined }),
    expect.objectContaining({
      kind: 'notice',
      text: 'Model request failed (RATE_LIMIT); retrying in 250 ms — retry 2 of 4',
    }),
  ])
})

test('a retry from a log written before maxRetries was recorded counts only the attempt, whatever its reason says', () => {
  const folded = fold(
    log(['llm/retry', { attempt: 3, code: 'TIMEOUT', delayMs: 4000, reason: 'TIMEOUT: retry 3 of 9' }]),
  )
  expect(folded.items).toEqual([
    expect.objectContaining({ kind: 'notice', text: 'Model request failed (TIMEOUT); retrying in 4 s — retry 3' }),
  ])
})
