// What the real runtime writes matches the protocol's own schemas (@dsh/sdk-protocol): every result of
// every method a session goes through, every notification and every approval request. The schemas are the
// description the types, the Python TypedDicts and protocol.schema.json are made from, so this keeps them
// true to the implementation.
import { afterAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import {
  CLIENT_METHOD_SCHEMAS,
  RpcNotificationSchema,
  RpcRequestSchema,
  RpcResponseSchema,
  SERVER_NOTIFICATION_SCHEMAS,
  SERVER_REQUEST_SCHEMAS,
  checkValue,
  type ClientMethod,
} from '@dsh/sdk-protocol'
import { fixtureToolsPatch, startRuntime, type Runtime } from './test-support/runtime.ts'

let llm: MockServer | undefined
let rt: Runtime | undefined
afterAll(async () => {
  await rt?.dispose()
  await llm?.close()
})

test('every result, notification and server request of a whole session matches its schema', async () => {
  llm = await startMockServer()
  llm.enqueue(
    { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'protected/a.txt', text: 'hi' } }] },
    { text: 'written' },
  )
  rt = await startRuntime({ llm, patch: fixtureToolsPatch() })
  const results: [ClientMethod, unknown][] = []
  const call = async (method: ClientMethod, params: unknown) => {
    const reply = await rt!.request(method, params)
    expect(reply.error, `${method} failed`).toBeUndefined()
    results.push([method, reply.result])
    return reply.result
  }
  await call('initialize', {
    protocolVersion: 1,
    clientInfo: { name: 'conformance', version: '1' },
    capabilities: { approvals: true },
  })
  const { sessionId } = await call('session/new', { route: 'deepseek/deepseek-v4-flash' })
  await call('session/prompt', { sessionId, content: [{ type: 'text', text: 'write it' }] })
  const asked = await rt.waitFor((m) => m.method === 'approval/request', 'the approval request')
  rt.send({ jsonrpc: '2.0', id: asked.id, result: { answer: 'allow_once' } })
  await rt.waitFor((m) => m.method === 'session.status' && m.params.status === 'idle', 'idle', 20_000)
  const { length } = await call('session/events', { sessionId, limit: 3 })
  // The display fold's items, declared in the same schemas (closed objects: a field the fold adds undeclared fails).
  const view = await call('session/view', { sessionId })
  expect(view.length).toBe(length)
  const kinds = view.items.map((item: { kind: string }) => item.kind)
  expect(kinds).toEqual(expect.arrayContaining(['user', 'tool', 'assistant', 'turn-end']))
  const card = view.items.find((item: { kind: string }) => item.kind === 'tool')
  expect(card).toMatchObject({
    name: 'write_file',
    status: 'done',
    change: { kind: 'write', path: 'protected/a.txt', content: 'hi' },
    changeState: 'applied',
    approval: { decided: { answer: 'allow_once' } },
  })
  const later = await call('session/view', { sessionId, fromSeq: card.seq + 1 })
  expect(later.items.every((item: { seq: number }) => item.seq > card.seq)).toBe(true)
  expect(later.items.length).toBeLessThan(view.items.length)
  await call('session/events', { sessionId, fromSeq: 3 })
  await call('session/list', {})
  const { hits } = await call('session/search', { query: 'write it', limit: 5 })
  expect(hits.map((hit: { sessionId: string }) => hit.sessionId)).toEqual([sessionId])
  await call('session/setModel', {
    sessionId,
    route: { provider: 'deepseek', model: 'deepseek-v4-pro', effort: 'high' },
  })
  await call('session/cancel', { sessionId })
  const forked = await call('session/fork', { sessionId, atSeq: length - 1 })
  expect(await call('session/rename', { sessionId: forked.sessionId, title: 'the fork' })).toEqual({
    title: 'the fork',
  })
  expect(await call('session/delete', { sessionId: forked.sessionId })).toEqual({ deleted: [forked.sessionId] })
  // Errors are part of the wire too: a parameter, a refusal and an unknown method.
  for (const [method, params] of [
    ['session/fork', { sessionId }],
    ['session/cancel', { sessionId: 'never-opened' }],
    ['session/teleport', {}],
  ] as const) {
    const reply = await rt.request(method, params)
    expect(reply.error, method).toBeDefined()
  }
  await call('shutdown', {})

  for (const [method, result] of results)
    expect(
      checkValue(CLIENT_METHOD_SCHEMAS[method].result, result),
      `the result of ${method}: ${JSON.stringify(result)}`,
    ).toBeUndefined()
  const notifications = rt.messages.filter((m) => m.method && m.id === undefined)
  expect(notifications.length).toBeGreaterThan(5)
  for (const message of notifications) {
    const schema = SERVER_NOTIFICATION_SCHEMAS[message.method as keyof typeof SERVER_NOTIFICATION_SCHEMAS]
    expect(schema, `an undeclared notification ${message.method}`).toBeDefined()
    expect(checkValue(schema, message.params), `${message.method}: ${JSON.stringify(message.params)}`).toBeUndefined()
  }
  expect(checkValue(SERVER_REQUEST_SCHEMAS['approval/request'].params, asked.params)).toBeUndefined()
  // The envelope of everything written: responses (results and errors), requests and notifications.
  for (const message of rt.messages) {
    const envelope =
      'id' in message && message.method ? RpcRequestSchema : message.method ? RpcNotificationSchema : RpcResponseSchema
    expect(checkValue(envelope, message), JSON.stringify(message).slice(0, 300)).toBeUndefined()
  }
  expect(rt.junk).toEqual([])
})
