import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

// The grant kinds are declared by their schemas (issue #28.6): a malformed one is refused on append, naming the field.
let h: Harness
afterEach(async () => h?.dispose())

test('grant/added, grant/revoked and grant/ignored not of their schema are refused, naming the field', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const grant = { id: 'g-0123abcd', rule: 'bash(npm test)', scope: 'session' as const, actor: 'user:web-tab' as const }
  expect(() => session.append('grant/added', { ...grant, scope: 'forever' as never })).toThrow(
    'data.scope must be one of session, workspace',
  )
  expect(() => session.append('grant/added', { ...grant, actor: 'model' as never })).toThrow(
    'data.actor must be one of',
  )
  expect(() => session.append('grant/added', { ...grant, requestId: 7 as never })).toThrow(
    'data.requestId must be a string',
  )
  expect(() => session.append('grant/added', { ...grant, rule: 'rm -rf' })).toThrow('data.rule:')
  expect(() => session.append('grant/revoked', { ...grant, id: 12 as never })).toThrow('data.id must be a string')
  expect(() => session.append('grant/revoked', { ...grant, rule: 'nope(x)' })).toThrow('data.rule: unknown rule kind')
  const ignored = { id: 'g-1', rule: 'bash(*)', claimedActor: 'user', reason: 'no valid integrity tag' }
  expect(() => session.append('grant/ignored', { ...ignored, reason: null as never })).toThrow(
    'data.reason must be a string',
  )
  expect(session.events.filter((event) => event.type.startsWith('grant/'))).toEqual([])
  // What the service writes still passes.
  session.append('grant/added', { ...grant, requestId: 'r-1' })
  session.append('grant/revoked', grant)
  session.append('grant/ignored', ignored)
  expect(session.events.filter((event) => event.type.startsWith('grant/')).length).toBe(3)
})
