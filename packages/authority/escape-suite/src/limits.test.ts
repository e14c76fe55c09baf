import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { eventually, outsideDir } from '@dsh/test-harness/world'
import { bash, bootAttack } from './index.ts'

// Resource limits of confined commands (docs/security.md, "Resource limits"), on the default composition
// with real bubblewrap, with limits set low in settings.yaml so the attacks meet them quickly. Each bomb
// carries its own hard cap far above the limit (so this machine is never at risk) and the test proves the
// limit, not the cap, stopped it.

const FILE_LIMIT = 1024 * 1024
const PROCESS_LIMIT = 40
const FORK_CAP = 300
const settings = `sandbox.limits.processes: ${PROCESS_LIMIT}\nsandbox.limits.fileSize: ${FILE_LIMIT}\n`

// Forks children that stay (30 s, then the sandbox's end kills them) until a fork fails or the cap is reached.
const forkBomb = [
  'python3 -c "',
  'import os, time',
  'n = 0',
  'for i in range(' + FORK_CAP + '):',
  '    try: pid = os.fork()',
  "    except OSError as error: print('fork failed:', error.strerror); break",
  '    if pid == 0: time.sleep(30); os._exit(0)',
  '    n += 1',
  "print('forks:', n)\"",
].join('\n')

test('a bounded fork bomb is stopped by the process limit, named to the model, and the next call works', async () => {
  const h = await bootAttack([bash('bomb', forkBomb), bash('after', 'echo still here')], {
    homeFiles: { 'settings.yaml': settings },
  })
  onTestFinished(() => h.dispose())
  expect((await h.run('build it')).reason).toBe('completed')
  const text = h.toolText('bomb')
  expect(text).toContain(
    `dsh: the command reached the sandbox's process limit (sandbox.limits.processes: ${PROCESS_LIMIT}): new processes were refused`,
  )
  const forks = Number(/forks: (\d+)/.exec(text)?.[1])
  expect(forks).toBeGreaterThan(0)
  expect(forks).toBeLessThan(PROCESS_LIMIT) // the limit ended it, not the loop's own cap
  expect(text).toContain('fork failed: Resource temporarily unavailable')
  expect(h.toolText('after')).toBe('still here')
})

test('a file-size bomb ends at the file-size limit, named to the model; the file is no bigger and the next call works', async () => {
  const h = await bootAttack([bash('bomb', 'head -c 50000000 /dev/zero > big'), bash('after', 'echo still here')], {
    homeFiles: { 'settings.yaml': settings },
  })
  onTestFinished(() => h.dispose())
  expect((await h.run('write it')).reason).toBe('completed')
  expect(h.toolText('bomb')).toContain(
    "dsh: exit 153 is SIGXFSZ: a write went past the sandbox's file-size limit (sandbox.limits.fileSize: 1 MiB)",
  )
  expect(h.toolText('bomb')).toContain('[Exit code 153]')
  expect(statSync(join(h.workspace, 'big')).size).toBeLessThanOrEqual(FILE_LIMIT)
  expect(h.toolText('after')).toBe('still here')
})

test('a background job is under the same limits: its file stops at the limit', async () => {
  const h = await bootAttack(
    [
      {
        id: 'job',
        tool: 'bash',
        args: { command: 'head -c 50000000 /dev/zero > big; echo "exit $?"', run_in_background: true },
      },
    ],
    {
      homeFiles: { 'settings.yaml': settings },
    },
  )
  onTestFinished(() => h.dispose())
  expect((await h.run('start it')).reason).toBe('completed')
  const sizeOf = () => {
    try {
      return statSync(join(h.workspace, 'big')).size
    } catch {
      return 0
    }
  }
  expect(await eventually(() => sizeOf() >= FILE_LIMIT)).toBe(true)
  await new Promise((resolve) => setTimeout(resolve, 500)) // a write past the limit would show by now
  expect(sizeOf()).toBe(FILE_LIMIT)
})

test('no capability is left to remount the host or the cgroup files writable (dsh running as root keeps none inside)', async () => {
  const outside = outsideDir()
  const h = await bootAttack(
    [
      bash(
        'remount',
        `mount -o remount,bind,rw / ; mount -o remount,bind,rw /sys/fs/cgroup/pids ; echo x > ${outside}/pwned; echo $$ > /sys/fs/cgroup/pids/cgroup.procs; grep CapEff /proc/self/status`,
      ),
    ],
    { homeFiles: { 'settings.yaml': settings } },
  )
  onTestFinished(() => h.dispose())
  expect((await h.run('remount')).reason).toBe('completed')
  expect(existsSync(join(outside, 'pwned'))).toBe(false)
  expect(h.toolText('remount')).toContain('CapEff:\t0000000000000000')
})
