// `--preset` (agent preset) and `--plan`, run in-process: the real HeadlessRun in a booted composition.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { UsageError } from '@dsh/cmdline'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/llm-scripted'
import { Config } from './config.ts'
import { readInvocation, type RunInvocation } from './options.ts'
import { HeadlessRun } from './run.ts'

async function boot(): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  return h
}

async function run(h: Harness, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  const invocation = readInvocation(argv, (options, args) => h.root.cmdlineArgs.parse(options, args)) as RunInvocation
  let stdout = ''
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    readStdin: async () => undefined,
  }
  const code = await new HeadlessRun(
    h.root,
    Config({} as Config),
    { ...invocation, source: { kind: 'new', cwd: h.workspace } },
    io,
  ).execute()
  return { code, stdout }
}

const onlySession = async (h: Harness) => {
  const sessions = await h.root.sessions.list()
  expect(sessions).toHaveLength(1)
  return (await h.root.sessions.read(sessions[0]!.id)).events
}

test('--preset explore creates a session whose request carries only reading tools, chosen by the cli flag', async () => {
  const h = await boot()
  h.root.scriptedLlm.enqueue({ text: 'looked' })
  expect(await run(h, '--preset', 'explore', 'look around')).toEqual({ code: 0, stdout: 'looked\n' })
  const names = h.root.scriptedLlm.requests[0]!.tools!.map((tool) => tool.name)
  expect(names).toContain('read')
  expect(names.some((name) => ['bash', 'write', 'edit', 'str_replace_editor', 'task'].includes(name))).toBe(false)
  const preset = (await onlySession(h)).find((event) => event.type === 'agent/preset')
  expect(preset?.data).toMatchObject({ name: 'explore', actor: 'user:cli-flag' })
})

test('--preset with an unknown name is a usage error naming the known presets, and no session is created', async () => {
  const h = await boot()
  await expect(run(h, '--preset', 'nope', 'hi')).rejects.toThrow(
    new UsageError('--preset: there is no agent preset "nope" (known: standard, explore, minimal, code)'),
  )
  expect(await h.root.sessions.list()).toEqual([])
  expect(h.root.scriptedLlm.requests).toEqual([])
})

test('--preset cannot change the preset of a resumed session', async () => {
  const h = await boot()
  expect(() =>
    readInvocation(['--preset', 'explore', '--resume', 'abc', 'more'], (options, args) =>
      h.root.cmdlineArgs.parse(options, args),
    ),
  ).toThrow('--preset cannot be combined with resume: a session keeps the agent preset it was created with')
})

test('--plan starts the session in plan mode: a write is refused and the file is absent', async () => {
  const h = await boot()
  h.root.scriptedLlm.enqueue(toolCall('w', 'write', { path: 'planned.txt', content: 'x' }), { text: 'planned' })
  expect((await run(h, '--plan', 'make planned.txt')).code).toBe(0)
  const events = await onlySession(h)
  expect(events.find((event) => event.type === 'plan/mode')?.data).toEqual({ active: true, actor: 'user:cli-flag' })
  const result = events.find((event) => event.type === 'tool/result')?.data as {
    error?: { code: string; message: string }
  }
  expect(result.error).toMatchObject({ code: 'DENIED', message: expect.stringContaining('plan mode') })
  expect(existsSync(join(h.workspace, 'planned.txt'))).toBe(false)
})
