// Two real peers wired to each other through the framing, as the runtime and the client use them.
import { expect, test } from 'vitest'
import { RPC_ERRORS } from '@dsh/sdk-protocol'
import { LineSplitter } from './lines.ts'
import { PeerRequestError, RequestTooLargeError, RpcPeer } from './peer.ts'
import { RpcError } from './error.ts'

/** A pair of peers; every line one writes is split by the other's framing and received. */
function pair(handlers: { server?: (method: string, params: Record<string, unknown>) => Promise<unknown> } = {}) {
  const wire: string[] = []
  const warnings: string[] = []
  let client!: RpcPeer
  const toClient = new LineSplitter(1024, 16, {
    line: (text) => client.receive(text),
    tooLong: () => warnings.push('client: too long'),
  })
  const server = new RpcPeer({
    write: (line) => (wire.push(`← ${line}`), toClient.push(Buffer.from(line + '\n'))),
    handle: async (method, params) => (handlers.server ? handlers.server(method, params) : { echoed: params }),
    excerptChars: 16,
    warn: (message) => warnings.push(`server: ${message}`),
    idPrefix: 'dsh-',
  })
  const toServer = new LineSplitter(1024, 16, {
    line: (text) => server.receive(text),
    tooLong: () => warnings.push('server: too long'),
  })
  client = new RpcPeer({
    write: (line) => (wire.push(`→ ${line}`), toServer.push(Buffer.from(line + '\n'))),
    handle: async (method) => {
      if (method === 'approval/request') return { answer: 'reject' }
      throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `no ${method}`, { method })
    },
    excerptChars: 16,
    warn: (message) => warnings.push(`client: ${message}`),
  })
  return { server, client, wire, warnings, toServer }
}

test('a request gets its result, with numeric ids on one side and prefixed ids on the other', async () => {
  const { server, client, wire } = pair()
  expect(await client.request('session/list', { cwd: '/w' })).toEqual({ echoed: { cwd: '/w' } })
  expect(await server.request('approval/request', { tool: 'bash' })).toEqual({ answer: 'reject' })
  expect(wire).toEqual([
    '→ {"jsonrpc":"2.0","id":1,"method":"session/list","params":{"cwd":"/w"}}',
    '← {"jsonrpc":"2.0","id":1,"result":{"echoed":{"cwd":"/w"}}}',
    '← {"jsonrpc":"2.0","id":"dsh-1","method":"approval/request","params":{"tool":"bash"}}',
    '→ {"jsonrpc":"2.0","id":"dsh-1","result":{"answer":"reject"}}',
  ])
})

test('an error reply rejects with the error object; a thrown non-RpcError is an internal error', async () => {
  const { client } = pair({
    server: async (method) => {
      if (method === 'typed') throw new RpcError(RPC_ERRORS.REQUEST_FAILED, 'refused', { code: 'SESSION_LOCKED' })
      throw new Error('disk on fire')
    },
  })
  const typed = (await client.request('typed', {}).catch((error) => error)) as PeerRequestError
  expect(typed).toBeInstanceOf(PeerRequestError)
  expect(typed.error).toEqual({ code: RPC_ERRORS.REQUEST_FAILED, message: 'refused', data: { code: 'SESSION_LOCKED' } })
  const internal = (await client.request('bug', {}).catch((error) => error)) as PeerRequestError
  expect(internal.error).toEqual({ code: RPC_ERRORS.INTERNAL_ERROR, message: 'Internal error: disk on fire' })
})

test('an aborted request rejects with the reason and its late answer is ignored with a warning', async () => {
  let release!: () => void
  const { client, warnings } = pair({ server: () => new Promise((resolve) => (release = () => resolve('late'))) })
  const controller = new AbortController()
  const pending = client.request('slow', {}, controller.signal)
  controller.abort(new Error('gave up'))
  await expect(pending).rejects.toThrow('gave up')
  release()
  await new Promise((resolve) => setImmediate(resolve))
  expect(warnings).toEqual([
    'client: a response to request 1, which is not waiting (answered late or never sent): ignored',
  ])
})

test('malformed input gets the spec error and nothing throws out of receive', () => {
  const { client, toServer, wire } = pair()
  for (const line of [
    '{"jsonrpc":"2.0","id":',
    '[1,2]',
    '"text"',
    '{"jsonrpc":"1.0","id":3,"method":"m"}',
    '{"jsonrpc":"2.0","id":4,"method":"m","params":[1]}',
  ])
    toServer.push(Buffer.from(line + '\n'))
  const replies = wire.filter((line) => line.startsWith('←')).map((line) => JSON.parse(line.slice(2)).error)
  expect(replies.map((error) => error.code)).toEqual([
    RPC_ERRORS.PARSE_ERROR,
    RPC_ERRORS.INVALID_REQUEST,
    RPC_ERRORS.INVALID_REQUEST,
    RPC_ERRORS.INVALID_REQUEST,
    RPC_ERRORS.INVALID_PARAMS,
  ])
  expect(replies[0].data).toEqual({ lineStart: '{"jsonrpc":"2.0"' })
  expect(replies[1].data).toEqual({ code: 'BATCH_UNSUPPORTED' })
  expect(replies[4].data).toEqual({ field: 'params' })
  void client
})

test('rejectPending fails every waiting request with the given error', async () => {
  const { client } = pair({ server: () => new Promise(() => {}) })
  const one = client.request('a', {})
  const two = client.request('b', {})
  const gone = new Error('the runtime exited')
  client.rejectPending(gone)
  await expect(one).rejects.toBe(gone)
  await expect(two).rejects.toBe(gone)
})

test('a request longer than the other end reads is refused at once and never written', async () => {
  const { client, wire } = pair()
  client.setMaxRequestBytes(200)
  const error = await client.request('echo', { text: 'x'.repeat(300) }).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(RequestTooLargeError)
  expect(error).toMatchObject({
    method: 'echo',
    limitBytes: 200,
    message: expect.stringMatching(/^echo: the request is 3\d\d bytes, over the 200-byte line limit/),
  })
  expect(wire).toEqual([])
  // A request that fits still goes out and is answered.
  expect(await client.request('echo', { text: 'short' })).toEqual({ echoed: { text: 'short' } })
})
