// Version skew: a newer client's `initialize` carries optional fields this runtime does not know. The
// handshake negotiates by `protocolVersion` and leaves them out, naming them in a warning on stderr; the
// fields it knows are checked as before, and every other method stays strict. The real runtime, in-process.
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { PROTOCOL_VERSION, RPC_ERRORS } from '@dsh/sdk-protocol'
import { startRuntime, type Runtime } from './test-support/runtime.ts'

let llm: MockServer
let rt: Runtime
beforeAll(async () => {
  llm = await startMockServer()
  rt = await startRuntime({ llm })
})
afterAll(async () => {
  await rt?.dispose()
  await llm?.close()
})

test('initialize ignores unknown fields (named in a warning), keeps known ones strict; other methods stay strict', async () => {
  // A known field of the wrong type is still refused, and the connection can initialize after it.
  const wrong = await rt.request('initialize', { protocolVersion: 'two', cwd: '/tmp' })
  expect(wrong.error).toMatchObject({ code: RPC_ERRORS.INVALID_PARAMS, data: { field: 'protocolVersion' } })

  const reply = await rt.request('initialize', {
    protocolVersion: PROTOCOL_VERSION + 1,
    cwd: rt.workspace,
    clientInfo: { name: 'a-newer-sdk', build: '2027.1' },
    capabilities: { approvals: true, terminals: true },
  })
  expect(reply.error).toBeUndefined()
  // The runtime answers with the version it speaks: the client decides whether it can speak it.
  expect(reply.result).toMatchObject({ protocolVersion: PROTOCOL_VERSION, capabilities: { approvals: true } })
  await rt.waitForStderr('initialize: ignored')
  expect(rt.stderr()).toContain(
    `initialize: ignored the fields this runtime (protocol ${PROTOCOL_VERSION}) does not know: cwd, clientInfo.build, capabilities.terminals`,
  )

  const strict = await rt.request('session/list', { cwd: rt.workspace, newerFilter: true })
  expect(strict.error).toMatchObject({ code: RPC_ERRORS.INVALID_PARAMS, data: { field: 'newerFilter' } })
  expect(strict.error!.message).toContain('"newerFilter" is not a known field here')
  expect(rt.junk).toEqual([])
})
