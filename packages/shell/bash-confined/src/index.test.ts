import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, expect, onTestFinished, test } from 'vitest'
import { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import SandboxLocal from '@dsh/sandbox-local'
import type { Shell } from '@dsh/shell'
import SubprocessLocal from '@dsh/subprocess-local'
import { bootComposition } from '@dsh/test-harness'
import { eventually, outsideDir, tempDir } from '@dsh/test-harness/world'
import BashConfined from './index.ts'

let workspace: string
beforeEach(() => {
  workspace = tempDir('dsh-ws-')
})

async function mount(): Promise<Shell> {
  const root = new Context()
  const fibers = [
    root.plugin(SubprocessLocal, SubprocessLocal.Config({ killGraceMs: 300 })),
    root.plugin(SandboxLocal, SandboxLocal.Config({})),
    root.plugin(BashConfined, BashConfined.Config({ interruptGraceMs: 500 })),
  ]
  for (const fiber of fibers) await fiber
  onTestFinished(async () => {
    for (const fiber of fibers.toReversed()) await fiber.dispose()
  })
  return root.get('shell')!
}

const workspaceWrite = (): SandboxAuthority => ({ mode: 'workspace-write', writableRoots: [workspace] })
const signal = () => new AbortController().signal

/** Host pids of live processes whose command line is exactly `argv` (sandboxed pids are not ours to see). */
function processesRunning(argv: string[]): number[] {
  const wanted = argv.join('\0') + '\0'
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return (
          readFileSync(`/proc/${pid}/cmdline`, 'utf8') === wanted &&
          !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
        )
      } catch {
        return false
      }
    })
    .map(Number)
}

test('the base bundle mounts ctx.shell backed by bash-confined, confining each command', async () => {
  const h = await bootComposition()
  onTestFinished(() => h.dispose())
  const shell = h.root.get('shell')!
  expect(shell).toBeInstanceOf(BashConfined)
  const authority: SandboxAuthority = { mode: 'workspace-write', writableRoots: [h.workspace] }
  const outside = outsideDir()
  const result = await shell.run(`echo hi > note.txt; cat note.txt; touch ${outside}/escape`, {
    cwd: h.workspace,
    signal: signal(),
    authority,
  })
  expect(result).toMatchObject({ enforcement: 'full', output: expect.stringMatching(/^hi\n.*Read-only file system/s) })
  expect(readFileSync(join(h.workspace, 'note.txt'), 'utf8')).toBe('hi\n')
  expect(existsSync(join(outside, 'escape'))).toBe(false)
})

test('in workspace-write a write inside the workspace succeeds', async () => {
  const shell = await mount()
  const result = await shell.run('echo kept > inside.txt', {
    cwd: workspace,
    signal: signal(),
    authority: workspaceWrite(),
  })
  expect(result).toMatchObject({ exitCode: 0, enforcement: 'full' })
  expect(readFileSync(join(workspace, 'inside.txt'), 'utf8')).toBe('kept\n')
})

test('in workspace-write writes outside the workspace and to $HOME fail and the files are absent', async () => {
  const shell = await mount()
  const outside = outsideDir()
  const home = join(homedir(), `.dsh-bash-confined-test-${process.pid}-${Date.now()}`)
  onTestFinished(() => rmSync(home, { force: true }))
  const result = await shell.run(`echo a > ${outside}/x; echo b > ${home}`, {
    cwd: workspace,
    signal: signal(),
    authority: workspaceWrite(),
  })
  expect(result.exitCode).not.toBe(0)
  expect(existsSync(join(outside, 'x'))).toBe(false)
  expect(existsSync(home)).toBe(false)
})

test('read-only refuses every write and the file is absent', async () => {
  const shell = await mount()
  const result = await shell.run('echo nope > inside.txt', {
    cwd: workspace,
    signal: signal(),
    authority: { mode: 'read-only', writableRoots: [] },
  })
  expect(result).toMatchObject({ enforcement: 'full', output: expect.stringContaining('Read-only file system') })
  expect(existsSync(join(workspace, 'inside.txt'))).toBe(false)
})

test('danger-full-access runs unconfined and a write outside the workspace succeeds', async () => {
  const shell = await mount()
  const outside = outsideDir()
  const result = await shell.run(`echo free > ${outside}/x`, {
    cwd: workspace,
    signal: signal(),
    authority: { mode: 'danger-full-access', writableRoots: [] },
  })
  expect(result).toMatchObject({ exitCode: 0, enforcement: 'none' })
  expect(readFileSync(join(outside, 'x'), 'utf8')).toBe('free\n')
})

test('without bwrap on PATH a confined command is refused naming bubblewrap, and nothing runs', async () => {
  const path = process.env.PATH
  process.env.PATH = '/nonexistent'
  onTestFinished(() => void (process.env.PATH = path))
  const shell = await mount()
  const run = shell.run(`/usr/bin/touch ${workspace}/ran`, {
    cwd: workspace,
    signal: signal(),
    authority: workspaceWrite(),
  })
  await expect(run).rejects.toMatchObject({
    code: 'SANDBOX_UNAVAILABLE',
    message: expect.stringContaining('bubblewrap (bwrap) not found on PATH'),
  })
  await expect(shell.openSession({ cwd: workspace, authority: workspaceWrite() })).rejects.toMatchObject({
    code: 'SANDBOX_UNAVAILABLE',
  })
  expect(existsSync(join(workspace, 'ran'))).toBe(false)
})

test('aborting a confined command kills everything it started', async () => {
  const shell = await mount()
  const controller = new AbortController()
  const sleeper = ['sleep', String(900_000 + (process.pid % 1000))]
  const run = shell.run(`${sleeper.join(' ')} & ${sleeper.join(' ')}`, {
    cwd: workspace,
    signal: controller.signal,
    authority: workspaceWrite(),
  })
  expect(await eventually(() => processesRunning(sleeper).length === 2)).toBe(true)
  controller.abort()
  expect((await run).aborted).toBe(true)
  expect(await eventually(() => processesRunning(sleeper).length === 0)).toBe(true)
})

test('a sandboxed session keeps cd and variables and still cannot write outside the workspace', async () => {
  const shell = await mount()
  const outside = outsideDir()
  const session = await shell.openSession({ cwd: workspace, authority: workspaceWrite() })
  expect(session.enforcement).toBe('full')
  await session.run('mkdir -p deep && cd deep && export FOO=bar', { signal: signal() })
  expect(await session.run('echo $FOO > here.txt; pwd', { signal: signal() })).toMatchObject({
    exitCode: 0,
    output: `${workspace}/deep\n`,
  })
  expect(readFileSync(join(workspace, 'deep', 'here.txt'), 'utf8')).toBe('bar\n')
  const escape = await session.run(`echo x > ${outside}/x`, { signal: signal() })
  expect(escape.exitCode).toBe(1)
  expect(existsSync(join(outside, 'x'))).toBe(false)
})

test('a sandboxed session command past its deadline is interrupted and the session stays usable', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: workspaceWrite() })
  await session.run('export KEPT=yes', { signal: signal() })
  expect(await session.run('sleep 1000', { timeoutMs: 1_500, signal: signal() })).toMatchObject({
    timedOut: true,
    exitCode: 130,
  })
  expect(await session.run('echo $KEPT', { signal: signal() })).toMatchObject({ output: 'yes\n' })
})

test('closing a sandboxed session kills everything in it', async () => {
  const shell = await mount()
  const session = await shell.openSession({ cwd: workspace, authority: workspaceWrite() })
  const sleeper = ['sleep', String(800_000 + (process.pid % 1000))]
  await session.run(`nohup ${sleeper.join(' ')} >/dev/null 2>&1 &`, { signal: signal() })
  expect(await eventually(() => processesRunning(sleeper).length === 1)).toBe(true)
  await session.close()
  expect(await eventually(() => processesRunning(sleeper).length === 0)).toBe(true)
})
