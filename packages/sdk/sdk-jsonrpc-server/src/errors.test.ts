// Protocol tests against the real runtime (`dsh --profile sdk`, in-process: test-support/runtime.ts): every error code.
import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { RPC_ERRORS } from '@dsh/sdk-protocol'
import { startInitialized, startRuntime, type Runtime } from './test-support/runtime.ts'

let llm: MockServer
beforeAll(async () => {
  llm = await startMockServer({ repeat: true })
  llm.enqueue({ text: 'still here' })
})
afterAll(async () => llm.close())

const SMALL_LINES = '- id: sdk-server\n  config: { maxLineBytes: 4096, excerptChars: 20 }\n'

describe('errors on one live connection', () => {
  let rt: Runtime
  beforeAll(async () => {
    rt = await startInitialized({ llm, patch: SMALL_LINES })
  })
  afterAll(async () => rt?.dispose())

  test('a malformed line gets -32700 quoting the start of the line, and the runtime keeps serving', async () => {
    rt.write('{"jsonrpc":"2.0","id":7,"method":"session/list"')
    const error = await rt.waitFor((m) => m.error?.code === RPC_ERRORS.PARSE_ERROR, 'a parse error')
    expect(error).toMatchObject({ id: null, error: { data: { lineStart: '{"jsonrpc":"2.0","id' } } })
    expect(error.error!.message).toMatch(/^Parse error: /)
    expect((await rt.request('session/list')).result).toEqual({ sessions: [] })
  })

  test('an unknown method gets -32601 naming it', async () => {
    const reply = await rt.request('session/teleport', { sessionId: 'x' })
    expect(reply.error).toEqual({
      code: RPC_ERRORS.METHOD_NOT_FOUND,
      message: 'Method not found: "session/teleport"',
      data: { method: 'session/teleport' },
    })
  })

  test.each([
    ['session/fork', { sessionId: 'abc', atSeq: 'three' }, 'atSeq'],
    [
      'session/prompt',
      {
        content: [
          { type: 'text', text: 'ok' },
          { type: 'text', text: 42 },
        ],
      },
      'content[1].text',
    ],
    ['session/prompt', { content: [] }, 'content'],
    ['session/new', { cwd: 'relative/dir' }, 'cwd'],
    ['session/new', { route: 'nobody/model-x' }, 'route.provider'],
    ['session/new', { route: { provider: 'deepseek', model: 'deepseek-v4-flash', effort: 'extreme' } }, 'route.effort'],
    ['session/events', { sessionId: 'abc', limit: 0 }, 'limit'],
    ['session/list', ['not', 'by', 'name'], 'params'],
  ])('bad params of %s get -32602 naming the field (%j)', async (method, params, field) => {
    const reply = await rt.request(method, params)
    expect(reply.error?.code).toBe(RPC_ERRORS.INVALID_PARAMS)
    expect(reply.error?.data).toEqual({ field })
    expect(reply.error?.message).toContain(`"${field}"`)
  })

  test('a line over maxLineBytes is dropped with -32600 LINE_TOO_LONG quoting its start, and the next line is served', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 99,
      method: 'session/prompt',
      params: { content: 'x'.repeat(200_000) },
    })
    rt.write(huge)
    const error = await rt.waitFor((m) => m.error?.data?.code === 'LINE_TOO_LONG', 'the size error')
    expect(error).toMatchObject({
      id: null,
      error: { code: RPC_ERRORS.INVALID_REQUEST, data: { lineStart: huge.slice(0, 20) } },
    })
    expect(error.error!.message).toContain('4096 bytes')
    expect(rt.messages.some((m) => m.id === 99)).toBe(false)
    const reply = await rt.request('session/prompt', { content: 'a normal line' })
    expect(reply.result.sessionId).toEqual(expect.any(String))
  })

  test('JSON that is not a JSON-RPC message gets -32600', async () => {
    rt.write('[{"jsonrpc":"2.0","id":1,"method":"session/list"}]')
    rt.write('{"jsonrpc":"1.0","id":"old","method":"session/list"}')
    const batch = await rt.waitFor((m) => m.error?.data?.code === 'BATCH_UNSUPPORTED', 'the batch error')
    expect(batch).toMatchObject({ id: null, error: { code: RPC_ERRORS.INVALID_REQUEST } })
    const version = await rt.waitFor((m) => m.id === 'old', 'the version error')
    expect(version.error).toMatchObject({ code: RPC_ERRORS.INVALID_REQUEST, data: { field: 'jsonrpc' } })
  })

  test('a refusal of the runtime gets -32000 with its typed code', async () => {
    const reply = await rt.request('session/cancel', { sessionId: 'never-opened' })
    expect(reply.error).toMatchObject({
      code: RPC_ERRORS.REQUEST_FAILED,
      data: { code: 'SESSION_NOT_OPEN', field: 'sessionId' },
    })
    const missing = await rt.request('session/events', { sessionId: 'nosuchsession' })
    expect(missing.error).toMatchObject({
      code: RPC_ERRORS.REQUEST_FAILED,
      data: { code: 'SESSION_NOT_FOUND', field: 'sessionId' },
    })
  })

  test('an internal failure gets -32603 naming what failed, and the runtime keeps serving', async () => {
    // A session whose log is a directory: reading it fails in the file system, not in any rule of ours.
    await rt.request('session/new', {})
    const sessions = join(rt.home, 'sessions')
    const key = readdirSync(sessions)[0]!
    mkdirSync(join(sessions, key, 'broken-session', 'session.jsonl'), { recursive: true })
    const reply = await rt.request('session/events', { sessionId: 'broken-session' })
    expect(reply.error?.code).toBe(RPC_ERRORS.INTERNAL_ERROR)
    expect(reply.error?.message).toMatch(/^Internal error: .*EISDIR/)
    expect((await rt.request('session/list')).result.sessions.length).toBeGreaterThan(0)
    expect(rt.junk).toEqual([])
  })
})

test('a request before initialize gets -32002, and initialize then works', async () => {
  const rt = await startRuntime({ llm })
  try {
    const early = await rt.request('session/list')
    expect(early.error).toMatchObject({ code: RPC_ERRORS.NOT_INITIALIZED, data: { code: 'NOT_INITIALIZED' } })
    const init = await rt.request('initialize', { protocolVersion: 1 })
    expect(init.result.protocolVersion).toBe(1)
    const again = await rt.request('initialize', { protocolVersion: 1 })
    expect(again.error).toMatchObject({ code: RPC_ERRORS.INVALID_REQUEST, data: { code: 'ALREADY_INITIALIZED' } })
  } finally {
    await rt.dispose()
  }
})
