import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { SessionError } from '@dsh/session'

interface LeaseHolder {
  pid: number
  host: string
  since: number
}

function alive(holder: LeaseHolder): boolean {
  if (holder.host !== hostname()) return true // cannot check another machine: assume it is alive
  try {
    process.kill(holder.pid, 0)
    return true
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM'
  }
}

/**
 * The lease is taken and dropped synchronously on purpose: it is one tiny file, and it is dropped in the
 * plugin's disposer at process exit, which cannot await (an unreleased lease would lock the session until
 * its pid is seen dead). Listing asks about many leases and uses the asynchronous `leaseIsLive`.
 */

/**
 * Takes the single-writer lease of a session folder: an exclusively created `lease` file naming this
 * process. A lease whose process is gone (a crash) is taken over; a live one is refused by name.
 */
export function takeLease(file: string, sessionId: string): void {
  const me: LeaseHolder = { pid: process.pid, host: hostname(), since: Date.now() }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600)
      writeSync(fd, JSON.stringify(me))
      closeSync(fd)
      return
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error
      let holder: LeaseHolder | undefined
      try {
        holder = JSON.parse(readFileSync(file, 'utf8'))
      } catch {
        holder = undefined // a lease torn by a crash while it was written
      }
      if (holder && holder.pid === process.pid && holder.host === me.host) {
        throw new SessionError('SESSION_LOCKED', `session ${sessionId} is already open in this process`)
      }
      if (holder && alive(holder)) {
        throw new SessionError(
          'SESSION_LOCKED',
          `session ${sessionId} is held by another dsh process (pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}); close it first`,
        )
      }
      unlinkSync(file)
    }
  }
  throw new SessionError('SESSION_LOCKED', `session ${sessionId}: could not take the writer lease`)
}

export async function leaseIsLive(file: string): Promise<boolean> {
  try {
    return alive(JSON.parse(await readFile(file, 'utf8')))
  } catch {
    return false
  }
}

export function dropLease(file: string): void {
  try {
    unlinkSync(file)
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error
  }
}
