import { type ChildProcess, spawn } from 'node:child_process'
import { JOB_TAG_VARIABLE } from './tagged.ts'

// Runs in a separate node process that outlives a dsh killed by SIGKILL (it leads its own process group,
// so a terminal's ^C reaches only dsh). dsh tells it on stdin which job groups are live (`+<pgid>` when a
// job starts, `-<pgid>` once it is gone, so a reused group id is never hit; each with the job's tag).
// Its stdin ends when dsh exits in whatever way; then it kills every group still listed, and every process
// whose environment carries a listed job's tag (what a job started outside its group, tagged.ts).
const REAPER = `
const { readdirSync, readFileSync } = require('node:fs')
const groups = new Map()
let pending = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (data) => {
  pending += data
  for (let at = pending.indexOf('\\n'); at !== -1; at = pending.indexOf('\\n')) {
    const line = pending.slice(0, at)
    pending = pending.slice(at + 1)
    const [group, tag] = line.slice(1).split(' ')
    if (line[0] === '+') groups.set(Number(group), tag)
    else groups.delete(Number(group))
  }
})
process.stdin.on('end', () => {
  for (const group of groups.keys()) try { process.kill(-group, 'SIGKILL') } catch {}
  const tags = [...groups.values()].map((tag) => Buffer.from('${JOB_TAG_VARIABLE}=' + tag + '\\0'))
  let names = []
  try { if (tags.length) names = readdirSync('/proc').filter((name) => /^\\d+$/.test(name)) } catch {}
  for (const name of names) {
    try {
      const environ = Buffer.concat([Buffer.from('\\0'), readFileSync('/proc/' + name + '/environ')])
      if (tags.some((entry) => environ.includes(Buffer.concat([Buffer.from('\\0'), entry])))) process.kill(Number(name), 'SIGKILL')
    } catch {}
  }
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

  watch(group: number, tag: string): void {
    this.send(`+${group} ${tag}`)
  }

  forget(group: number, tag: string): void {
    this.send(`-${group} ${tag}`)
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
    const child = spawn(process.execPath, ['-e', REAPER], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { PATH: process.env.PATH ?? '' },
    })
    child.on('error', () => {}) // no reaper: the teardown and the sandbox still end jobs
    child.stdin?.on('error', () => {})
    child.unref()
    ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
    return child
  }
}
