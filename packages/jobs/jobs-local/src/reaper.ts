import { type ChildProcess, spawn } from 'node:child_process'

// Runs in a separate node process that outlives a dsh killed by SIGKILL (it leads its own process group,
// so a terminal's ^C reaches only dsh). dsh tells it on stdin which job groups are live (`+<pgid>` when a
// job starts, `-<pgid>` once it is gone, so a reused group id is never hit). Its stdin ends when dsh exits
// in whatever way; then it kills every group still listed.
const REAPER = `
const groups = new Set()
let pending = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (data) => {
  pending += data
  for (let at = pending.indexOf('\\n'); at !== -1; at = pending.indexOf('\\n')) {
    const line = pending.slice(0, at)
    pending = pending.slice(at + 1)
    const group = Number(line.slice(1))
    if (line[0] === '+') groups.add(group)
    else groups.delete(group)
  }
})
process.stdin.on('end', () => {
  for (const group of groups) try { process.kill(-group, 'SIGKILL') } catch {}
  process.exit(0)
})
`

/**
 * The last line of defence for jobs when dsh dies without running its teardown (SIGKILL, a crash of the
 * runtime): a confined job would die with its bubblewrap anyway, but an unconfined one that ignores the
 * terminal's hang-up would outlive dsh. Started with the first job; it holds no reference on the event loop.
 */
export class Reaper {
  private child: ChildProcess | undefined

  /** Starts the reaper before the first job's terminal opens, so it inherits no terminal of a job. */
  ensureRunning(): void {
    this.child ??= this.spawnReaper()
  }

  watch(group: number): void {
    this.send(`+${group}`)
  }

  forget(group: number): void {
    this.send(`-${group}`)
  }

  /** Ends the reaper (its stdin closes: it kills what is still listed, nothing when every job is gone). */
  close(): void {
    this.child?.stdin?.end()
    this.child = undefined
  }

  private send(line: string): void {
    this.ensureRunning()
    this.child!.stdin?.write(`${line}\n`)
  }

  private spawnReaper(): ChildProcess {
    const child = spawn(process.execPath, ['-e', REAPER], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: { PATH: process.env.PATH ?? '' } })
    child.on('error', () => {}) // no reaper: the teardown and the sandbox still end jobs
    child.stdin?.on('error', () => {})
    child.unref()
    ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
    return child
  }
}
