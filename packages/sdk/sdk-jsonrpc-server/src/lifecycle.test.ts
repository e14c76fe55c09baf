// Protocol tests against the real runtime (`dsh --profile sdk`, spawned: the process is the subject): how it ends.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { RPC_ERRORS } from '@dsh/sdk-protocol'
import { startInitialized, startRuntime, type Runtime } from './test-support/runtime.ts'

let rt: Runtime | undefined
let llm: MockServer
beforeAll(async () => void (llm = await startMockServer()))
beforeEach(() => llm.reset())
afterEach(async () => rt?.dispose())
afterAll(async () => llm.close())

/** The session's directory under the JSONL store (`sessions/<cwd-key>/<id>`). */
function sessionDir(home: string, sessionId: string): string {
  const root = join(home, 'sessions')
  const key = readdirSync(root).find((entry) => existsSync(join(root, entry, sessionId)))!
  return join(root, key, sessionId)
}

const storedTypes = (home: string, sessionId: string) =>
  readFileSync(join(sessionDir(home, sessionId), 'session.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line).type)

test('shutdown replies, refuses what comes after it, releases the session and exits 0', async () => {
  llm.enqueue({ text: 'bye' })
  rt = await startInitialized({ llm, process: true })
  const { sessionId } = (await rt.request('session/prompt', { content: 'hi' })).result
  await rt.waitFor((m) => m.method === 'session.status' && m.params.status === 'idle', 'idle')
  rt.write(
    JSON.stringify({ jsonrpc: '2.0', id: 'stop', method: 'shutdown' }) +
      '\n' +
      JSON.stringify({ jsonrpc: '2.0', id: 'late', method: 'session/list' }),
  )
  expect((await rt.waitFor((m) => m.id === 'stop', 'the shutdown reply')).result).toEqual({})
  expect((await rt.waitFor((m) => m.id === 'late', 'the late reply')).error).toMatchObject({
    code: RPC_ERRORS.SHUTTING_DOWN,
  })
  expect(await rt.exited).toEqual({ code: 0, signal: null })
  expect(existsSync(join(sessionDir(rt.home, sessionId), 'lease'))).toBe(false)
  expect(storedTypes(rt.home, sessionId).at(-1)).toBe('turn/end')
})

test('EOF on stdin mid-turn cancels the turn, flushes the log and exits 0', async () => {
  llm.enqueue({ text: ['an answer ', 'that never ends'], stallAfterChunks: 3 })
  rt = await startInitialized({ llm, process: true })
  const { sessionId } = (await rt.request('session/prompt', { content: 'talk' })).result
  await rt.waitFor((m) => m.method === 'session.event' && m.params.event.type === 'assistant/chunk', 'a chunk')
  rt.child!.stdin.end()
  expect(await rt.exited).toEqual({ code: 0, signal: null })
  const types = storedTypes(rt.home, sessionId)
  expect(types.slice(-3)).toEqual(['assistant/message', 'step/end', 'turn/end'])
  const last = JSON.parse(
    readFileSync(join(sessionDir(rt.home, sessionId), 'session.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .at(-1)!,
  )
  expect(last.data.reason).toBe('aborted')
  expect(existsSync(join(sessionDir(rt.home, sessionId), 'lease'))).toBe(false)
  expect(rt.junk).toEqual([])
})

test('EOF on an idle runtime exits 0 at once', async () => {
  rt = await startInitialized({ llm, process: true })
  rt.child!.stdin.end()
  expect(await rt.exited).toEqual({ code: 0, signal: null })
  // The launcher force-exits (and says so) 2 s after the end when a handle is left open: a clean exit never says it.
  expect(rt.stderr()).not.toContain('a handle was still open')
})

test('an argument the sdk profile does not take is bad usage: exit 2 naming it, nothing on stdout', async () => {
  rt = await startRuntime({ llm, args: ['--modle', 'deepseek-v4-pro'], process: true })
  // Without the check the runtime would serve (and wait for requests) with the typo silently ignored.
  expect(await rt.exited).toEqual({ code: 2, signal: null })
  await rt.waitForStderr("Unknown option '--modle'")
  expect(rt.messages).toEqual([])
  expect(rt.junk).toEqual([])
})
