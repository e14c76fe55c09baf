import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onTestFinished } from 'vitest'

// Helpers that make or look at the real world inside a vitest test (they register cleanups with the
// running test, so this module is a separate export: benchmarks import the harness without vitest).

/** A new directory (its real path) under `parent`, removed when the current test finishes. */
export function tempDir(prefix = 'dsh-test-', parent = tmpdir()): string {
  const dir = realpathSync(mkdtempSync(join(parent, prefix)))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A directory outside every test workspace and outside /tmp (bubblewrap gives a confined command its own
 * /tmp, so a refused write there would prove nothing), removed when the current test finishes.
 */
export function outsideDir(prefix = 'dsh-outside-'): string {
  return tempDir(prefix, existsSync('/var/tmp') ? '/var/tmp' : tmpdir())
}

/** Pids of living processes whose command line (arguments joined by spaces) contains `needle` (a zombie has none). */
export function processesWith(needle: string): string[] {
  return readdirSync('/proc').filter((pid) => {
    if (!/^\d+$/.test(pid)) return false
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(needle)
    } catch {
      return false // the process ended while we looked
    }
  })
}

/** True while `pid` exists and is not a zombie waiting to be reaped. */
export function processRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/** Polls `check` until it holds or `timeoutMs` passes; resolves with its last answer, for `expect(…).toBe(true)`. */
export async function eventually(check: () => boolean, timeoutMs = 2_000, intervalMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, intervalMs))
  return check()
}
