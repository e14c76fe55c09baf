import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { spawn } from 'node:child_process'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32, deflateSync } from 'node:zlib'
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

/**
 * Polls `check` until it holds (true) or `timeoutMs` passes (false), for `expect(…).toBe(true)`. The answer that
 * ended the wait is the one returned: asking again could see a passing moment undone (a `bash -c` found by its
 * command line is mid-`exec` into its command a moment later, and /proc shows neither command line).
 */
export async function eventually(check: () => boolean, timeoutMs = 20_000, intervalMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (check()) return true
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

/** A user's secrets planted for an attack test: a fake `HOME` and `DSH_HOME`, both outside /tmp. */
export interface SecretWorld {
  /** The fake `HOME` (process.env.HOME points at it until the test finishes). */
  home: string
  /** A `DSH_HOME` to boot with (`bootComposition({ home })`), holding `.credentials.yaml`. */
  dshHome: string
  /** `~/.ssh/id_rsa`. */
  sshKey: string
  /** `$DSH_HOME/.credentials.yaml`. */
  credentials: string
  /** The text in both files and nowhere else: it must appear in no tool result and no log. */
  secret: string
}

/**
 * Plants `~/.ssh/id_rsa` and `$DSH_HOME/.credentials.yaml` in temp folders outside /tmp (bubblewrap gives a
 * command its own /tmp, so a secret there would be hidden for the wrong reason) and points `HOME` at the
 * fake home until the current test finishes.
 */
export function secretWorld(): SecretWorld {
  const home = outsideDir('dsh-fake-home-')
  const dshHome = outsideDir('dsh-fake-dsh-home-')
  const secret = `SECRET-${Math.random().toString(36).slice(2)}`
  mkdirSync(join(home, '.ssh'), { mode: 0o700 })
  const sshKey = join(home, '.ssh', 'id_rsa')
  writeFileSync(sshKey, `-----BEGIN KEY-----\n${secret}\n-----END KEY-----\n`, { mode: 0o600 })
  const credentials = join(dshHome, '.credentials.yaml')
  writeFileSync(credentials, `DEEPSEEK_API_KEY: ${secret}\n`, { mode: 0o600 })
  const previous = process.env.HOME
  process.env.HOME = home
  onTestFinished(() => {
    process.env.HOME = previous
  })
  return { home, dshHome, sshKey, credentials, secret }
}

/**
 * The environment as it is now, and a function that puts it back: variables added since are removed, changed
 * ones restored, on the process's own environment. (Assigning a copy to `process.env` instead detaches it from
 * the real environment: `os.homedir()` and every later file sharing the worker would read stale values.)
 */
export function saveEnvironment(): () => void {
  const saved = { ...process.env }
  return () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
    Object.assign(process.env, saved)
  }
}

/** Sets variables of dsh's own environment (the user's keys an attack hunts for) until the current test finishes. */
export function plantEnvironment(values: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]))
  Object.assign(process.env, values)
  onTestFinished(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
}

/** The files under `dir` whose bytes contain `needle` (a secret that must not have reached a log). */
export function filesContaining(dir: string, needle: string): string[] {
  if (!existsSync(dir)) return []
  const found: string[] = []
  const visit = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name)
      if (statSync(path).isDirectory()) visit(path)
      else if (readFileSync(path).includes(needle)) found.push(path)
    }
  }
  visit(dir)
  return found
}

/** A real PNG of `width`×`height` pixels of one colour (image attachments that decode, for the tests). */
export function pngOfColour(width: number, height: number, rgb: [number, number, number]): Buffer {
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())])
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/**
 * A session folder whose `lease` names a live process on this host (a `sleep` started here), as a second dsh
 * writing that session would leave it. `release()` (also run when the test finishes) ends the process and waits
 * for it; the lease file stays, naming a dead pid, as after a crash.
 */
export function leaseHeldElsewhere(sessionFolder: string): { pid: number; release(): Promise<void> } {
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()))
  const release = async () => {
    holder.kill()
    await exited
  }
  onTestFinished(release)
  writeFileSync(join(sessionFolder, 'lease'), JSON.stringify({ pid: holder.pid, host: hostname(), since: Date.now() }))
  return { pid: holder.pid!, release }
}
