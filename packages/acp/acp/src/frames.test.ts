import { createInterface } from 'node:readline'
import { afterEach, expect, test } from 'vitest'
import { spawnAgent, type SpawnedAgent } from './test-support/agent-process.ts'

// Raw newline-delimited JSON on the agent's stdio (in-process; the last test spawns it): what an editor with a bug
// would send.
let agent: SpawnedAgent | undefined
afterEach(async () => agent?.cleanup())

function lines(spawned: SpawnedAgent) {
  const queue: unknown[] = []
  const waiting: ((value: unknown) => void)[] = []
  createInterface({ input: spawned.output }).on('line', (line) => {
    // Every stdout line must be a JSON-RPC frame: JSON.parse throws (and fails the test) on anything else.
    const frame = JSON.parse(line)
    const next = waiting.shift()
    if (next) next(frame)
    else queue.push(frame)
  })
  return {
    send: (text: string) => spawned.input.write(`${text}\n`),
    next: () =>
      new Promise<any>((resolve, reject) => {
        if (queue.length) return resolve(queue.shift())
        const timer = setTimeout(() => reject(new Error(`no frame within 40 s; stderr:\n${spawned.stderr()}`)), 40_000)
        waiting.push((frame) => (clearTimeout(timer), resolve(frame)))
      }),
  }
}

test('malformed frames get JSON-RPC errors and the agent keeps serving', async () => {
  agent = spawnAgent({ patch: '[]', env: { DEEPSEEK_API_KEY: 'test-key-0123456789' } })
  const io = lines(agent)
  io.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: 1, clientCapabilities: {} },
    }),
  )
  expect(await io.next()).toMatchObject({ id: 1, result: { protocolVersion: 1 } })

  io.send('{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {')
  expect(await io.next()).toMatchObject({ id: null, error: { code: -32700 } })

  io.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/new', params: { cwd: 42 } }))
  expect(await io.next()).toMatchObject({ id: 3, error: { code: -32602 } })

  io.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'session/teleport', params: {} }))
  expect(await io.next()).toMatchObject({ id: 4, error: { code: -32601 } })

  io.send(
    JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'session/new', params: { cwd: agent.workspace, mcpServers: [] } }),
  )
  expect(await io.next()).toMatchObject({ id: 5, result: { sessionId: expect.any(String) } })
})

test('a request before initialize is refused and initialize still works after it', async () => {
  agent = spawnAgent({ patch: '[]', env: { DEEPSEEK_API_KEY: 'test-key-0123456789' } })
  const io = lines(agent)
  io.send(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: agent.workspace, mcpServers: [] } }),
  )
  expect(await io.next()).toMatchObject({ id: 1, error: { code: -32600 } })
  io.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: 1, clientCapabilities: {} },
    }),
  )
  expect(await io.next()).toMatchObject({ id: 2, result: { protocolVersion: 1 } })
})

test('an argument dsh acp does not take stops the start with a message naming it, and nothing on stdout', async () => {
  agent = spawnAgent({
    patch: '[]',
    env: { DEEPSEEK_API_KEY: 'test-key-0123456789' },
    args: ['--modle', 'x'],
    process: true,
  })
  let stdout = ''
  agent.output.on('data', (chunk) => (stdout += chunk))
  // Without the check the agent would serve (and wait for the editor) with the typo silently ignored.
  expect(await agent.exited).not.toBe(0)
  // stderr may still be draining when the exit is reported.
  await expect.poll(() => agent!.stderr(), { timeout: 30_000 }).toContain("Unknown option '--modle'")
  expect(stdout).toBe('')
})
