// `session.command()` of the TypeScript SDK against the real runtime (`dsh --profile sdk` from dist) and the
// mock model server; the workspace holds a Claude Code command file.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { Harness } from './index.ts'

let llm: MockServer
let home: string
let workspace: string
let harness: Harness

beforeAll(async () => {
  llm = await startMockServer()
  home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-home-')))
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-ws-')))
  mkdirSync(join(workspace, '.claude/commands'), { recursive: true })
  writeFileSync(join(workspace, '.claude/commands/greet.md'), '---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1, politely.\n')
  harness = await Harness.start({ cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' } })
})
afterAll(async () => {
  await harness?.close()
  await llm.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(workspace, { recursive: true, force: true })
})

test('a user command from .claude/commands runs with its argument: the model gets the expanded prompt and the run is returned', async () => {
  const session = await harness.session()
  expect((await session.commands()).find((command) => command.name === 'greet')).toEqual({
    name: 'greet',
    description: 'Greet someone',
    argumentHint: '<name>',
    origin: join(workspace, '.claude/commands/greet.md'),
  })
  llm.enqueue({ text: 'Hello, Ada.' })
  const result = await session.command('/greet Ada')
  expect(result).toMatchObject({ handled: true, name: 'greet', messageId: expect.any(String), run: { text: 'Hello, Ada.', reason: 'completed' } })
  expect(llm.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Say hello to Ada, politely.' })
})

test('a built-in answers without a turn, /clear gives the new session, and an unknown /word sends nothing', async () => {
  const session = await harness.session()
  const before = llm.requests.length
  expect(await session.command('/cost')).toMatchObject({ handled: true, name: 'cost', output: expect.stringContaining('0 model requests') })
  const cleared = await session.command('/clear')
  expect(cleared.newSession?.id).toBe(cleared.newSessionId)
  expect(cleared.newSessionId).not.toBe(session.id)
  expect(await session.command('/nosuch x')).toEqual({ handled: false, unknown: 'nosuch' })
  expect(await session.command('/model nowhere/x')).toMatchObject({ handled: true, error: { code: 'COMMAND_BAD_ARGS' } })
  expect(llm.requests.length).toBe(before)
})
