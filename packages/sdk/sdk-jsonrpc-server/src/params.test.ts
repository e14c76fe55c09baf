// Every params object is checked against the protocol's schemas (@dsh/sdk-protocol) before a method runs:
// a malformed one gets -32602 naming the field, and nothing happens in the world (no session, no turn).
import { readdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { RPC_ERRORS } from '@dsh/sdk-protocol'
import { startInitialized, type Runtime } from './test-support/runtime.ts'

let llm: MockServer
let rt: Runtime
beforeAll(async () => {
  llm = await startMockServer({ repeat: true })
  llm.enqueue({ text: 'should never be asked' })
  rt = await startInitialized({ llm })
})
afterAll(async () => {
  await rt?.dispose()
  await llm?.close()
})

test.each([
  ['session/fork', { sessionId: 'abc' }, 'atSeq', 'is required'],
  ['session/cancel', { sessionId: 'abc', force: true }, 'force', 'is not a known field here'],
  [
    'session/prompt',
    { content: [{ type: 'image', mediaType: 'text/html', data: 'PGh0bWw+' }] },
    'content[0].mediaType',
    'must match pattern',
  ],
  ['session/prompt', { content: [{ type: 'video', url: 'x' }] }, 'content[0].type', 'must be'],
  ['session/prompt', { content: 42 }, 'content', 'must be string or array'],
  ['session/new', { route: { provider: 'deepseek' } }, 'route.model', 'is required'],
  ['session/events', { sessionId: 'abc', fromSeq: -1 }, 'fromSeq', 'must be >= 0'],
  ['session/setPermission', { sessionId: 'abc', preset: 7 }, 'preset', 'must be string'],
])('%s with %j is refused with -32602 naming %s', async (method, params, field, problem) => {
  const reply = await rt.request(method, params)
  expect(reply.error).toMatchObject({ code: RPC_ERRORS.INVALID_PARAMS, data: { field } })
  expect(reply.error!.message).toContain(`"${field}" ${problem}`)
})

test('a refused prompt starts no session and asks the model nothing', async () => {
  const reply = await rt.request('session/prompt', {
    content: [{ type: 'text', text: 'hi' }],
    sessionId: 'x',
    extra: 1,
  })
  expect(reply.error?.data).toEqual({ field: 'extra' })
  const sessions = join(rt.home, 'sessions')
  expect(existsSync(sessions) ? readdirSync(sessions) : []).toEqual([])
  expect(llm.requests).toHaveLength(0)
})
