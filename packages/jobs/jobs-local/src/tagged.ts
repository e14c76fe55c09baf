import { readdirSync, readFileSync } from 'node:fs'

// A job's process group is not all it may leave behind: `setsid` (or a daemonizing dev server) starts a new
// session and group that a group kill misses, and an unconfined job has no sandbox whose end takes it along.
// Every job's environment carries its own tag; processes that inherited it are found in /proc and killed
// with the job. A process that clears its environment on purpose escapes this (docs: jobs-local README).

/** The variable each job's environment carries, its value unique to the job. */
export const JOB_TAG_VARIABLE = 'DSH_JOB_TAG'

/** The pids (Linux /proc; none elsewhere) whose environment holds `tag`, this process excluded. */
export function processesTagged(tag: string): number[] {
  const entry = Buffer.from(`\0${JOB_TAG_VARIABLE}=${tag}\0`)
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const found: number[] = []
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      // A leading NUL so the first variable matches like the others.
      if (Buffer.concat([Buffer.from('\0'), readFileSync(`/proc/${pid}/environ`)]).includes(entry)) found.push(pid)
    } catch {
      // gone, or not ours to read
    }
  }
  return found
}

/** SIGKILLs every process that still carries `tag`; returns how many were hit. */
export function killTagged(tag: string): number {
  let killed = 0
  for (const pid of processesTagged(tag)) {
    try {
      process.kill(pid, 'SIGKILL')
      killed++
    } catch {
      // already gone
    }
  }
  return killed
}
