import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

export interface LadderTimings {
  /** How long the group has to exit after SIGTERM before it gets SIGKILL. */
  killGraceMs: number
  /** How often the group is checked while waiting. */
  groupPollMs: number
}

/**
 * Signals every process of group `pgid`. A child just forked may not have made its group yet (setsid runs
 * between fork and exec), so then the leader is signalled alone. False when neither exists.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  for (const target of [-pgid, pgid]) {
    try {
      process.kill(target, signal)
      return true
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'ESRCH')) throw error
    }
  }
  return false
}

/**
 * Whether any member of group `pgid` still runs. A zombie does not count: its orphans are reaped by init,
 * and an init that reaps late (some containers) would otherwise stretch every kill to two grace periods.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false
  if (process.platform !== 'linux') return true
  return livingMembers(pgid)
}

function livingMembers(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // exited while we looked
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so split after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if ((Number(pgrp) === pgid || Number(entry) === pgid) && state !== 'Z') return true
  }
  return false
}

async function waitGone(pgid: number, timings: LadderTimings): Promise<boolean> {
  const deadline = Date.now() + timings.killGraceMs
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false
    await sleep(timings.groupPollMs)
  }
  return true
}

/**
 * The kill ladder: SIGTERM to the whole group (a chance to clean up), SIGKILL to the group after the grace.
 * Resolves when the group is gone (or, if even SIGKILL leaves a member, e.g. one stuck in the kernel, after
 * one more grace period: nothing more can be done from here).
 */
export async function killGroup(pgid: number, timings: LadderTimings): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return
  if (await waitGone(pgid, timings)) return
  signalGroup(pgid, 'SIGKILL')
  await waitGone(pgid, timings)
}
