import { expect, test } from 'vitest'
import { decide, type DecisionInput } from './decide.ts'

const input = (over: Partial<DecisionInput>): DecisionInput => ({
  host: 'svc.test',
  port: 80,
  allow: [],
  deny: [],
  granted: [],
  resolve: async () => ['127.0.0.1'],
  ask: async () => ({ allowed: true, requestId: 'r1' }),
  ...over,
})

test('a strict client reaches a private address only by an exact allow entry: a grant or an approval does not admit it', async () => {
  let asked = 0
  const ask = async () => (asked++, { allowed: true as const, requestId: 'r1' })
  expect((await decide(input({ granted: ['svc.test'], ask }))).decision.decision).toBe('allowed')
  expect((await decide(input({ ask }))).decision.decision).toBe('approved')
  expect(asked).toBe(1)
  const strictGrant = await decide(input({ granted: ['svc.test'], strictPrivate: true, ask }))
  expect(strictGrant.decision).toEqual({
    host: 'svc.test',
    port: 80,
    decision: 'refused',
    rule: 'a private address needs an exact network.allow entry (strict client)',
    address: '127.0.0.1',
  })
  expect((await decide(input({ strictPrivate: true, ask }))).decision.decision).toBe('refused')
  expect(asked).toBe(1)
  expect((await decide(input({ allow: ['svc.test'], strictPrivate: true }))).decision.decision).toBe('allowed')
  // A public address is decided as for any client: strictness only concerns private ones.
  expect((await decide(input({ strictPrivate: true, resolve: async () => ['93.184.215.14'] }))).decision.decision).toBe(
    'approved',
  )
})
