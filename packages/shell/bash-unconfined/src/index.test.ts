import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import type { Shell } from '@dsh/shell'
import SubprocessLocal from '@dsh/subprocess-local'
import { eventually, processRunning as running, tempDir } from '@dsh/test-harness/world'
import BashUnconfined, { type Config } from './index.ts'

let workspace: string
let stop: (() => Promise<unknown>) | undefined
beforeEach(() => {
  workspace = tempDir('dsh-ws-')
})
afterEach(async () => {
  await stop?.()
  stop = undefined
})

async function mount(config: Partial<Config> = {}): Promise<Shell> {
  const root = new Context()
  const subprocess = root.plugin(SubprocessLocal, SubprocessLocal.Config({ killGraceMs: 300 }))
  const shell = root.plugin(BashUnconfined, BashUnconfined.Config({ interruptGraceMs: 500, ...config }))
  await subprocess
  await shell
  stop = async () => {
    await shell.dispose()
    await subprocess.dispose()
  }
  return root.get('shell')!
}

const authority = (): SandboxAuthority => ({ mode: 'workspace-write', writableRoots: [workspace] })
const signal = () => new AbortController().signal

test('a command reports its output and exit code and says it was not confined', async () => {
  const shell = await mount()
  const result = await shell.run('echo hi; echo oops >&2; exit 7', {
    cwd: workspace,
    signal: signal(),
    authority: authority(),
  })
  expect(result).toMatchObject({
    exitCode: 7,
    output: 'hi\noops\n',
    enforcement: 'none',
    timedOut: false,
    truncated: false,
  })
})

test('a runaway command is killed with its whole process group at its deadline', async () => {
  const shell = await mount()
  const result = await shell.run('sleep 1000 & echo pid=$!; sleep 1000', {
    cwd: workspace,
    timeoutMs: 1_500,
    signal: signal(),
    authority: authority(),
  })
  expect(result.timedOut).toBe(true)
  const pid = Number(/pid=(\d+)/.exec(result.output)![1])
  expect(await eventually(() => !running(pid))).toBe(true)
})

test('output over the configured cap keeps its head and tail', async () => {
  const shell = await mount({ outputCapBytes: 200 })
  const result = await shell.run('seq 1 5000', { cwd: workspace, signal: signal(), authority: authority() })
  expect(result.truncated).toBe(true)
  expect(result.output).toMatch(/^1\n2\n[\s\S]*\[… \d+ bytes cut …\][\s\S]*4999\n5000\n$/)
})

test("the configured environment and the caller's reach the command", async () => {
  const shell = await mount({ env: { FROM_CONFIG: 'a' } })
  const result = await shell.run('echo $FROM_CONFIG $FROM_CALLER', {
    cwd: workspace,
    env: { FROM_CALLER: 'b' },
    signal: signal(),
    authority: authority(),
  })
  expect(result.output).toBe('a b\n')
})

test('a session keeps cd and exported variables across commands', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  await session.run('mkdir sub && cd sub && export FOO=bar', { signal: signal() })
  const result = await session.run("pwd; echo $FOO; bash -c 'echo child sees $FOO'", { signal: signal() })
  expect(result.output).toBe(`${workspace}/sub\nbar\nchild sees bar\n`)
  expect(session.cwd()).toBe(`${workspace}/sub`)
})

test("a session reports each command's exit code and output", async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  expect(await session.run('false', { signal: signal() })).toMatchObject({ exitCode: 1, output: '' })
  expect(await session.run('printf partial; (exit 42)', { signal: signal() })).toMatchObject({
    exitCode: 42,
    output: 'partial',
    enforcement: 'none',
  })
  expect(await session.run('if then', { signal: signal() })).toMatchObject({
    exitCode: 2,
    output: expect.stringContaining('syntax error'),
  })
})

test('a session runs on a terminal', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  expect((await session.run('tty', { signal: signal() })).output).toMatch(/^\/dev\/pts\/\d+\n$/)
})

test('a long command with quotes, newlines and non-ASCII text reaches the session intact', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  const text = Array.from({ length: 300 }, (_, i) => `line ${i} 'single' "double" \\back $dollar ünïcødé ✓`).join('\n')
  const command = `cat <<'EOF'\n${text}\nEOF`
  expect(command.length).toBeGreaterThan(10_000)
  const result = await session.run(command, { signal: signal() })
  expect(result.output).toBe(text + '\n')
  expect(result.exitCode).toBe(0)
})

test('a session command past its deadline is interrupted and the session stays usable', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  await session.run('export KEPT=yes', { signal: signal() })
  const result = await session.run('echo started; sleep 1000', { timeoutMs: 1_500, signal: signal() })
  expect(result).toMatchObject({ timedOut: true, exitCode: 130, output: expect.stringContaining('started') })
  expect(await session.run('echo $KEPT', { signal: signal() })).toMatchObject({ exitCode: 0, output: 'yes\n' })
})

test('aborting a session command interrupts it', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 200)
  const result = await session.run('sleep 1000', { signal: controller.signal })
  expect(result).toMatchObject({ aborted: true, timedOut: false })
  expect(result.durationMs).toBeLessThan(60_000) // the command would sleep 1,000 s
  expect((await session.run('echo still here', { signal: signal() })).output).toBe('still here\n')
})

test('a command that ignores the interrupt costs the session', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  const result = await session.run("trap '' INT; sleep 1000", { timeoutMs: 1_500, signal: signal() })
  expect(result.timedOut).toBe(true)
  expect(result.exitCode).toBe(null)
  expect(session.closed).toBe(true)
  await expect(session.run('true', { signal: signal() })).rejects.toMatchObject({ code: 'SESSION_CLOSED' })
})

test('exit ends the session with its status', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  expect(await session.run('exit 3', { signal: signal() })).toMatchObject({ exitCode: 3 })
  expect(session.closed).toBe(true)
})

test('closing a session kills what it left running in the background', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  const result = await session.run('sleep 1000 & echo pid=$!', { signal: signal() })
  const pid = Number(/pid=(\d+)/.exec(result.output)![1])
  expect(running(pid)).toBe(true)
  await session.close()
  expect(await eventually(() => !running(pid))).toBe(true)
})

test('disposing the provider closes its sessions', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: authority() })
  const pid = Number(/pid=(\d+)/.exec((await session.run('echo pid=$$', { signal: signal() })).output)![1])
  expect(running(pid)).toBe(true)
  await stop!()
  stop = undefined
  expect(session.closed).toBe(true)
  expect(await eventually(() => !running(pid))).toBe(true)
})

test('a session in a missing directory is refused before anything starts', async () => {
  const shell = await mount()
  await expect(shell.openSession({ cwd: join(workspace, 'missing'), authority: authority() })).rejects.toMatchObject({
    code: 'SPAWN_FAILED',
  })
  expect(existsSync(join(workspace, 'missing'))).toBe(false)
})
