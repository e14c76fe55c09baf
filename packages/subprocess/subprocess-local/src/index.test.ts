import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import type { Subprocess } from '@dsh/subprocess'
import { eventually, processRunning as running, tempDir } from '@dsh/test-harness/world'
import SubprocessLocal, { type Config } from './index.ts'

let cwd: string
let stop: (() => Promise<unknown>) | undefined
beforeEach(() => {
  cwd = tempDir('dsh-subprocess-')
})
afterEach(async () => {
  await stop?.()
  stop = undefined
})

async function mount(config: Partial<Config> = {}): Promise<Subprocess> {
  const root = new Context()
  const fiber = root.plugin(SubprocessLocal, SubprocessLocal.Config({ killGraceMs: 300, ...config }))
  await fiber
  stop = () => fiber.dispose()
  return root.get('subprocess')!
}

const pidsIn = (output: string) => [...output.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1]))
const bash = (script: string) => ['bash', '-c', script]

test('a command reports its output from both streams and its exit code', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(bash('echo out; echo err >&2; exit 3'), { cwd })
  expect(result.exitCode).toBe(3)
  expect(result.output).toContain('out\n')
  expect(result.output).toContain('err\n')
  expect(result).toMatchObject({ signal: null, truncated: false, timedOut: false, aborted: false })
})

test('stderr kept separate leaves stdout alone in output', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(bash('echo out; echo err >&2; exit 2'), { cwd, stderr: 'separate' })
  expect(result).toMatchObject({ exitCode: 2, output: 'out\n', stderr: 'err\n' })
})

test('a runaway process tree is killed with its whole group at its deadline', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(bash('sleep 1000 & echo pid=$!; echo pid=$$; sleep 1000'), {
    cwd,
    timeoutMs: 1_500,
  })
  expect(result.timedOut).toBe(true)
  expect(result.signal).toBe('SIGTERM')
  const pids = pidsIn(result.output)
  expect(pids).toHaveLength(2)
  expect(await eventually(() => pids.every((pid) => !running(pid)))).toBe(true)
})

test('a group that ignores SIGTERM is killed with SIGKILL after the grace period', async () => {
  const subprocess = await mount({ killGraceMs: 200 })
  const result = await subprocess.run(bash("trap '' TERM; sleep 1000 & echo pid=$!; sleep 1000"), {
    cwd,
    timeoutMs: 1_000,
  })
  expect(result.timedOut).toBe(true)
  expect(result.signal).toBe('SIGKILL')
  expect(result.durationMs).toBeGreaterThanOrEqual(1_200) // the deadline, then the grace
  expect(await eventually(() => !running(pidsIn(result.output)[0]!))).toBe(true)
})

test('processes a finished command left in the background are killed', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(bash('sleep 1000 & echo pid=$!'), { cwd, timeoutMs: 5_000 })
  expect(result.timedOut).toBe(false)
  expect(result.exitCode).toBe(0)
  expect(await eventually(() => !running(pidsIn(result.output)[0]!))).toBe(true)
})

test('aborting a run kills its whole group', async () => {
  const subprocess = await mount()
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 300)
  const result = await subprocess.run(bash('sleep 1000 & echo pid=$!; echo pid=$$; sleep 1000'), {
    cwd,
    signal: controller.signal,
  })
  expect(result.aborted).toBe(true)
  expect(result.timedOut).toBe(false)
  const pids = pidsIn(result.output)
  expect(pids).toHaveLength(2)
  expect(await eventually(() => pids.every((pid) => !running(pid)))).toBe(true)
})

test('output over the cap keeps the head and the tail with a note of how much was cut', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(['seq', '1', '100000'], { cwd, outputCapBytes: 1_000 })
  expect(result.truncated).toBe(true)
  expect(result.output.startsWith('1\n2\n3\n')).toBe(true)
  expect(result.output.endsWith('99999\n100000\n')).toBe(true)
  const total = Buffer.byteLength(Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join(''))
  expect(result.output).toContain(`[… ${total - 1_000} bytes cut …]`)
})

test('input is written to the command and then closed', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(['cat'], { cwd, input: 'fed in\n' })
  expect(result.output).toBe('fed in\n')
})

test('a command on a terminal sees a pseudo-terminal', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(bash('tty; exit 4'), { cwd, pty: true })
  expect(result.output).toMatch(/^\/dev\/pts\/\d+\n$/)
  expect(result.exitCode).toBe(4)
})

test('terminal output is complete when the command exits at once', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(['seq', '1', '20000'], { cwd, pty: true, outputCapBytes: 1_000_000 })
  expect(result.truncated).toBe(false)
  expect(result.output).toBe(Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join(''))
})

test('a terminal command is killed with its group at its deadline', async () => {
  const subprocess = await mount()
  const result = await subprocess.run(bash('sleep 1000 & echo pid=$!; echo pid=$$; sleep 1000'), {
    cwd,
    pty: true,
    timeoutMs: 300,
  })
  expect(result.timedOut).toBe(true)
  const pids = pidsIn(result.output)
  expect(pids).toHaveLength(2)
  expect(await eventually(() => pids.every((pid) => !running(pid)))).toBe(true)
})

test('a missing working directory is refused before anything starts', async () => {
  const subprocess = await mount()
  await expect(subprocess.run(['true'], { cwd: join(cwd, 'nope') })).rejects.toMatchObject({
    code: 'SPAWN_FAILED',
    message: expect.stringContaining(join(cwd, 'nope')),
  })
})

test('a program that does not exist is refused with its name', async () => {
  const subprocess = await mount()
  await expect(subprocess.run(['dsh-no-such-program'], { cwd })).rejects.toMatchObject({
    code: 'SPAWN_FAILED',
    message: expect.stringContaining('dsh-no-such-program'),
  })
})

test('a terminal process answers what is written to it', async () => {
  const subprocess = await mount()
  const terminal = await subprocess.openPty(['cat'], { cwd })
  let seen = ''
  terminal.onData((data) => (seen += data))
  terminal.write('hello pty\n')
  expect(await eventually(() => /hello pty\r\n.*hello pty/s.test(seen))).toBe(true)
  await terminal.terminate()
})

test('disposing the provider kills the terminals still running', async () => {
  const subprocess = await mount()
  const terminal = await subprocess.openPty(['sleep', '1000'], { cwd })
  expect(running(terminal.pid)).toBe(true)
  await stop!()
  stop = undefined
  expect(await eventually(() => !running(terminal.pid))).toBe(true)
  expect((await terminal.exited).signal).toMatch(/^SIG(TERM|KILL)$/)
})

test('a command whose signal was aborted before it started is stopped at once, with pipes and a PTY', async () => {
  const subprocess = await mount({ timeoutMs: 20_000 })
  for (const pty of [false, true]) {
    const controller = new AbortController()
    controller.abort()
    const started = Date.now()
    const result = await subprocess.run(bash('sleep 300'), { cwd, signal: controller.signal, pty })
    expect(result.aborted).toBe(true)
    expect(Date.now() - started).toBeLessThan(30_000) // the command would sleep 300 s
  }
})

/** Sets variables in this process's environment for one test (the environment children would inherit). */
function withEnv(variables: Record<string, string>) {
  const before = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]))
  Object.assign(process.env, variables)
  return () => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

const SECRETS = {
  DSH_TEST_API_KEY: 'sk-subprocess-test-0123456789',
  DSH_TEST_TOKEN: 'tok-subprocess-test-0123456789',
  EDITOR_FOR_TEST: 'vim-for-test',
}

test('a child gets the allow-list only: secret-looking and unlisted variables of this process stay behind', async () => {
  const restore = withEnv(SECRETS)
  try {
    const subprocess = await mount()
    const pipes = await subprocess.run(['env'], { cwd, env: { PAGER: 'cat', CALLER_TOKEN: 'caller-token-0123456789' } })
    const pty = await subprocess.run(['env'], { cwd, pty: true })
    for (const output of [pipes.output, pty.output]) {
      expect(output).toContain(`PATH=${process.env.PATH}\n`)
      for (const text of [
        ...Object.keys(SECRETS),
        ...Object.values(SECRETS),
        'CALLER_TOKEN',
        'caller-token-0123456789',
      ])
        expect(output).not.toContain(text)
    }
    expect(pipes.output).toContain('PAGER=cat\n')
  } finally {
    restore()
  }
})

test('a live terminal gets the scrubbed environment too, and a supplied policy decides what more it inherits', async () => {
  const restore = withEnv(SECRETS)
  try {
    const subprocess = await mount()
    const owner = new Context().plugin((ctx: Context) =>
      subprocess.usePolicy(ctx, () => ({
        include: ['EDITOR_*', 'DSH_TEST_*'],
        exclude: [],
        set: { CHOSEN: 'by-the-user' },
      })),
    )
    await owner
    const terminal = await subprocess.openPty(['env'], { cwd })
    let output = ''
    terminal.onData((data) => (output += data))
    await terminal.exited
    expect(output).toContain('EDITOR_FOR_TEST=vim-for-test')
    expect(output).toContain('CHOSEN=by-the-user')
    expect(output).not.toContain('DSH_TEST_API_KEY')
    expect(output).not.toContain(SECRETS.DSH_TEST_TOKEN)
    await owner.dispose()
    expect(subprocess.policy()).toEqual({ include: [], exclude: [], set: {} })
  } finally {
    restore()
  }
})
