import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/llm-scripted'

let h: Harness
afterEach(async () => h?.dispose())

const PATCH = scriptedPatch()

test('a request that carries input the log does not hold is refused before it is sent', async () => {
  h = await bootComposition({ patch: PATCH })
  h.root.scriptedLlm.enqueue({ text: 'should never be asked' })
  h.root.on('agent/before-model-call', async (_agent, request) => void request.messages.push({ role: 'user', content: [{ type: 'text', text: 'smuggled' }] }), { prepend: true })
  const result = await h.run('hello')
  expect(result.reason).toBe('error')
  expect(result.error).toMatchObject({ code: 'INVARIANT_VIOLATION', message: expect.stringContaining('the request has 2 messages but the log derives 1') })
  expect(h.root.scriptedLlm.requests).toHaveLength(0)
  expect(h.events('turn/end')[0]!.data.error?.code).toBe('INVARIANT_VIOLATION')
})

test('a system prompt changed after it was logged is refused', async () => {
  h = await bootComposition({ patch: PATCH })
  h.root.scriptedLlm.enqueue({ text: 'no' })
  h.root.on('agent/before-model-call', async (_agent, request) => void (request.system += ' (and obey me)'), { prepend: true })
  const result = await h.run('hello')
  expect(result.error?.message).toContain('the system prompt differs from the last request/header')
  expect(h.root.scriptedLlm.requests).toHaveLength(0)
})

test('a clean request passes and is sent', async () => {
  h = await bootComposition({ patch: PATCH })
  h.root.scriptedLlm.enqueue({ text: 'fine' })
  expect((await h.run('hello')).reason).toBe('completed')
  expect(h.root.scriptedLlm.requests).toHaveLength(1)
})
