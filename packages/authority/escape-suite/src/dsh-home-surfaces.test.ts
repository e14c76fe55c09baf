import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { startMockServer } from '@dsh/llm-mock-server'
import { dshInProcess, launchInProcess } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'

// A session whose workspace is dsh's home or inside it could rewrite the settings, grants and patch layers
// the next session obeys: every surface refuses it, with the same message, because every one creates its
// session through ctx.sessions, which asks the sandbox policy first (session/workspace-refused). Each
// surface is the real launcher (in this process: the refusal, not the process boundary, is the subject) in a
// clean environment with a fake HOME; the model is the mock server.

const REFUSAL =
  /is dsh's home \(\$DSH_HOME.*or inside it.*none is started.*edit the files in \$DSH_HOME yourself, outside a session/

async function world() {
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const home = outsideDir('dsh-fake-home-')
  const dshHome = join(home, '.dsh')
  mkdirSync(join(dshHome, 'skills'), { recursive: true })
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: dshHome,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'sk-surface-test-0123456789',
  }
  return { llm, home, dshHome, env }
}

const run = (args: string[], cwd: string, env: Record<string, string>) => dshInProcess(args, { cwd, env })

/** A JSON-RPC peer over newline-delimited stdio (the SDK's and ACP's framing). */
function rpc(args: string[], cwd: string, env: Record<string, string>) {
  const launch = launchInProcess(args, { cwd, env })
  let ended = false
  void launch.exited.then(() => (ended = true))
  // The editor (or program) goes away: stdin ends, and the launch must end with it.
  onTestFinished(async () => {
    launch.stdin.end()
    await launch.exited
  })
  const replies = new Map<number, (reply: any) => void>()
  let buffered = ''
  launch.streams.stdout.on('data', (chunk: string) => {
    buffered += chunk
    for (let newline; (newline = buffered.indexOf('\n')) !== -1;) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      const message = JSON.parse(line)
      if (typeof message.id === 'number' && !message.method) replies.get(message.id)?.(message)
    }
  })
  let next = 1
  return {
    request(method: string, params: unknown): Promise<any> {
      const id = next++
      launch.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
      return new Promise((resolve, reject) => {
        replies.set(id, resolve)
        const exitedFirst = () =>
          reject(new Error(`dsh ${args.join(' ')} exited before answering ${method}; stderr:\n${launch.stderr()}`))
        if (ended) exitedFirst()
        else void launch.exited.then(exitedFirst)
      })
    },
  }
}

test("the CLI refuses a session in dsh's home or inside it (exit 2, the message on stderr) and starts nothing", async () => {
  const { dshHome, env } = await world()
  for (const cwd of [dshHome, join(dshHome, 'skills')]) {
    const result = await run(['--quiet', 'write a grant'], cwd, env)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(REFUSAL)
    expect(result.stderr).not.toMatch(/\n\s+at /) // no stack trace
  }
  const flag = await run(['--cwd', dshHome, 'write a grant'], outsideDir('dsh-elsewhere-'), env)
  expect(flag.code).toBe(2)
  expect(flag.stderr).toMatch(REFUSAL)
  expect(readdirSync(dshHome).filter((name) => name === 'sessions' && readdirSync(join(dshHome, name)).length)).toEqual(
    [],
  )
})

test("the SDK's session/new refuses dsh's home with a typed error naming the way to change settings", async () => {
  const { dshHome, env } = await world()
  const sdk = rpc(['--profile', 'sdk'], outsideDir('dsh-elsewhere-'), env)
  expect(
    (await sdk.request('initialize', { protocolVersion: 1, clientInfo: { name: 'escape-suite' }, capabilities: {} }))
      .error,
  ).toBeUndefined()
  const reply = await sdk.request('session/new', { cwd: dshHome })
  expect(reply.error?.data?.code).toBe('WORKSPACE_REFUSED')
  expect(reply.error?.message).toMatch(REFUSAL)
})

test("ACP's session/new refuses dsh's home, inside it too", async () => {
  const { dshHome, env } = await world()
  const acp = rpc(['acp'], outsideDir('dsh-elsewhere-'), env)
  expect(
    (
      await acp.request('initialize', {
        protocolVersion: 1,
        clientCapabilities: {},
        clientInfo: { name: 'escape-suite', version: '0' },
      })
    ).error,
  ).toBeUndefined()
  for (const cwd of [dshHome, join(dshHome, 'skills')]) {
    const reply = await acp.request('session/new', { cwd, mcpServers: [] })
    expect(JSON.stringify(reply.error)).toMatch(/WORKSPACE_REFUSED|is dsh's home/)
    expect(reply.error?.message + JSON.stringify(reply.error?.data ?? '')).toMatch(REFUSAL)
  }
})

test("a session in the user's home is said once on stderr, then runs", async () => {
  const { llm, home, env } = await world()
  llm.enqueue({ text: 'done' })
  const result = await run(['hello'], home, { ...env, DSH_HOME: outsideDir('dsh-home-') })
  expect(result.code).toBe(0)
  expect(
    result.stderr.match(/is your home folder: the model may change any file in it except secret and protected ones/g),
  ).toHaveLength(1)
})
