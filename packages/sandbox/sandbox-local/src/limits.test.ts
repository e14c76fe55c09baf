import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { Context } from '@dsh/cordis'
import type { Sandbox } from '@dsh/sandbox'
import { tempDir } from '@dsh/test-harness/world'
import SandboxLocal from './index.ts'
import { findHierarchy, type ResourceLimits } from './limits.ts'

async function mount(limits: Partial<ResourceLimits>): Promise<Sandbox> {
  const root = new Context()
  const fiber = root.plugin(SandboxLocal, SandboxLocal.Config({ limits: limits as ResourceLimits }))
  await fiber
  onTestFinished(() => fiber.dispose())
  return root.get('sandbox')!
}

async function run(sandbox: Sandbox, script: string): Promise<{ code: number | null; output: string }> {
  const workspace = tempDir('dsh-ws-')
  const { argv } = await sandbox.confine(['bash', '-c', script], {
    cwd: workspace,
    authority: { mode: 'workspace-write', writableRoots: [workspace] },
  })
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

test('a command past the memory limit is killed by its cgroup and the message names the setting', async () => {
  const sandbox = await mount({ memory: 64 * 1024 * 1024 })
  // 512 MiB touched page by page, far past the 64 MiB limit; a cap of its own keeps this machine safe.
  const result = await run(sandbox, `python3 -c "b = bytearray(512 * 1024 * 1024); print('allocated')"`)
  expect(result.output).not.toContain('allocated')
  expect(result.output).toContain(
    "dsh: a process was killed for using more than the sandbox's memory limit (sandbox.limits.memory: 64 MiB)",
  )
})

test('a process past its CPU time is stopped by SIGXCPU and the message names the setting', async () => {
  const sandbox = await mount({ cpuSeconds: 1 })
  // Spins for at most 20 s of wall time; the 1 s limit ends it first.
  const result = await run(
    sandbox,
    `exec python3 -c '
import time
end = time.time() + 20
while time.time() < end: pass
print("spun")'`,
  )
  expect(result.code).toBe(152)
  expect(result.output).not.toContain('spun')
  expect(result.output).toContain(
    "dsh: exit 152 is SIGXCPU: a process used up the sandbox's CPU-time limit (sandbox.limits.cpuSeconds: 1 s)",
  )
})

test('every limit 0 leaves the command as it was: no rlimit set', async () => {
  const sandbox = await mount({ processes: 0, fileSize: 0, memory: 0, addressSpace: 0, cpuSeconds: 0 })
  const result = await run(sandbox, 'ulimit -f; ulimit -t; ulimit -v')
  expect(result.output).toBe('unlimited\nunlimited\nunlimited\n')
})

// The launcher outside bubblewrap sets the rlimits (prlimit64) on the process that becomes bwrap; everything
// inside inherits them, and a hard limit cannot be raised (no capability). Joining the cgroups is what the
// memory test above and the escape suite's fork bomb show.
test('the rlimits hold inside the sandbox, and the command cannot raise a hard limit', async () => {
  const sandbox = await mount({ fileSize: 5 * 1024 * 1024, addressSpace: 4 * 1024 ** 3, cpuSeconds: 30 })
  const result = await run(
    sandbox,
    'ulimit -S -f; ulimit -H -f; ulimit -S -t; ulimit -H -t; ulimit -v; ulimit -H -f unlimited 2>/dev/null && echo raised || echo refused',
  )
  expect(result.output.trim().split('\n')).toEqual(['5120', '5120', '30', '35', String(4 * 1024 * 1024), 'refused'])
})

test('the command cgroups are reused once idle and removed when the row is disposed', async () => {
  const root = new Context()
  const fiber = root.plugin(SandboxLocal, SandboxLocal.Config({ limits: { processes: 100 } as ResourceLimits }))
  await fiber
  const sandbox = root.get('sandbox')!
  for (let i = 0; i < 6; i++) {
    expect((await run(sandbox, 'echo ok')).output).toBe('ok\n')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const pids = findHierarchy(
    'pids',
    readFileSync('/proc/self/cgroup', 'utf8'),
    readFileSync('/proc/self/mountinfo', 'utf8'),
  )!
  const mine = readdirSync(pids.dir).filter((entry) => entry.startsWith(`dsh-${process.pid}-`))
  // Six commands one after another: an idle cgroup is reused (the kernel may list an exited one for a moment).
  expect(
    mine.flatMap((entry) =>
      readdirSync(join(pids.dir, entry), { withFileTypes: true }).filter((child) => child.isDirectory()),
    ).length,
  ).toBeLessThan(6)
  await fiber.dispose()
  expect(mine.filter((entry) => existsSync(join(pids.dir, entry)))).toEqual([])
})

test('cgroup hierarchies are found in v1 (one mount per controller) and v2 (one unified mount)', () => {
  const v1 = '4:memory:/box/a\n8:pids:/\n0::/\n'
  const v1Mounts =
    '30 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n36 25 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n'
  expect(findHierarchy('memory', v1, v1Mounts)).toEqual({
    controller: 'memory',
    version: 1,
    dir: '/sys/fs/cgroup/memory/box/a',
  })
  expect(findHierarchy('pids', v1, v1Mounts)).toEqual({ controller: 'pids', version: 1, dir: '/sys/fs/cgroup/pids' })
  const v2Mounts = '29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n'
  expect(findHierarchy('pids', '0::/user.slice/user-1000.slice/session-2.scope\n', v2Mounts)).toEqual({
    controller: 'pids',
    version: 2,
    dir: '/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope',
  })
  expect(findHierarchy('pids', '0::/\n', '')).toBeUndefined()
})
