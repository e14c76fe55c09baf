// `session.command()` of the TypeScript SDK against the real runtime (`dsh --profile sdk` from dist) and the
// mock model server; the workspace holds a Claude Code command file.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
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
  writeFileSync(
    join(workspace, '.claude/commands/greet.md'),
    '---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1, politely.\n',
  )
  harness = await Harness.start({
    cwd: workspace,
    env: { DSH_HOME: home, DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
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
  expect(result).toMatchObject({
    handled: true,
    name: 'greet',
    messageId: expect.any(String),
    run: { text: 'Hello, Ada.', reason: 'completed' },
  })
  expect(llm.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Say hello to Ada, politely.' })
})

test('a built-in answers without a turn, /clear gives the new session, and an unknown /word sends nothing', async () => {
  const session = await harness.session()
  const before = llm.requests.length
  expect(await session.command('/cost')).toMatchObject({
    handled: true,
    name: 'cost',
    output: expect.stringContaining('0 model requests'),
  })
  const cleared = await session.command('/clear')
  expect(cleared.newSession?.id).toBe(cleared.newSessionId)
  expect(cleared.newSessionId).not.toBe(session.id)
  expect(await session.command('/nosuch x')).toEqual({ handled: false, unknown: 'nosuch' })
  expect(await session.command('/model nowhere/x')).toMatchObject({
    handled: true,
    error: { code: 'COMMAND_BAD_ARGS' },
  })
  expect(llm.requests.length).toBe(before)
})

test("session.changes() lists the session's files with diffs, and rewind(1) restores them on disk; a file changed since is reported, not overwritten", async () => {
  writeFileSync(join(workspace, 'kept.txt'), 'before\n')
  writeFileSync(join(workspace, 'theirs.txt'), 'base\n')
  const session = await harness.session()
  llm.enqueue(
    {
      toolCalls: [
        { id: 'w', name: 'write', arguments: { path: 'made.txt', content: 'new\n' } },
        { id: 'r1', name: 'read', arguments: { path: 'kept.txt' } },
        { id: 'r2', name: 'read', arguments: { path: 'theirs.txt' } },
      ],
    },
    {
      toolCalls: [
        { id: 'e1', name: 'edit', arguments: { path: 'kept.txt', old_string: 'before', new_string: 'after' } },
        { id: 'e2', name: 'edit', arguments: { path: 'theirs.txt', old_string: 'base', new_string: 'ours' } },
      ],
    },
    { text: 'Done.' },
  )
  await session.run('change things')
  const changes = await session.changes()
  expect(changes.files.map((file) => [file.path, file.status]).sort()).toEqual([
    ['kept.txt', 'modified'],
    ['made.txt', 'added'],
    ['theirs.txt', 'modified'],
  ])
  expect(changes.files.find((file) => file.path === 'kept.txt')!.patch).toContain('-before\n+after')

  writeFileSync(join(workspace, 'theirs.txt'), 'someone else\n')
  const done = await session.rewind(1)
  expect(done.conflicts).toEqual([expect.objectContaining({ path: expect.stringContaining('theirs.txt') })])
  expect(readFileSync(join(workspace, 'kept.txt'), 'utf8')).toBe('before\n')
  expect(existsSync(join(workspace, 'made.txt'))).toBe(false)
  expect(readFileSync(join(workspace, 'theirs.txt'), 'utf8')).toBe('someone else\n')
  expect(done.actor).toBe('client:sdk')
})
