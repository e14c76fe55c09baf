import { createHash, randomBytes } from 'node:crypto'
import { closeSync, linkSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { SessionError } from '@dsh/session'

interface LeaseHolder {
  pid: number
  host: string
  since: number
  /** Unique to one taking of the lease: what a drop and a takeover compare (older leases have none). */
  token?: string
}

/** What a taken lease is known by: the token its holder wrote, so it drops only its own. */
export type LeaseToken = string

function alive(holder: { pid: number; host: string }): boolean {
  if (holder.host !== hostname()) return true // cannot check another machine: assume it is alive
  try {
    process.kill(holder.pid, 0)
    return true
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM'
  }
}

const codeOf = (error: unknown) => (error instanceof Error && 'code' in error ? error.code : undefined)

/** The lease's raw text, or undefined when there is none. */
function readRaw(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined
    throw error
  }
}

function parse(raw: string): LeaseHolder | undefined {
  try {
    const holder = JSON.parse(raw)
    return typeof holder?.pid === 'number' && typeof holder?.host === 'string' ? holder : undefined
  } catch {
    return undefined // a lease torn by a crash while an older version wrote it in place
  }
}

/** Writes `text` whole to a new file of a name nobody else uses (the lease and a claim are linked from it). */
function writeNew(file: string, text: string): void {
  const fd = openSync(file, 'wx', 0o600)
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
}

function unlinkIfThere(file: string): void {
  try {
    unlinkSync(file)
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') throw error
  }
}

/**
 * The lease is taken and dropped synchronously on purpose: it is one tiny file, and it is dropped in the
 * plugin's disposer at process exit, which cannot await (an unreleased lease would lock the session until
 * its pid is seen dead). Listing asks about many leases and uses the asynchronous `leaseIsLive`.
 *
 * Taking and taking over are atomic (decision `2026-12-02-atomic-lease.md`): a lease is written whole to a
 * temp file and `link()`ed to `lease` (fails if one is there) — so no reader sees a half-written lease — and a
 * stale lease is replaced by `rename()` only by the one process holding the takeover claim of exactly that
 * lease (`lease.takeover-<digest of its text>-<n>`, a link to the new lease made exclusively; a claim whose
 * process died is passed by the next `n`), after reading the lease again under the claim. Two processes can never both believe they
 * hold the lease, and a drop unlinks the lease only while it still carries the dropper's token.
 */

/**
 * Takes the single-writer lease of a session folder: a `lease` file naming this process. A lease whose process
 * is gone (a crash) is taken over; a live one is refused by name. Returns the token to drop it with.
 */
export function takeLease(file: string, sessionId: string): LeaseToken {
  const token = randomBytes(12).toString('hex')
  const me: LeaseHolder = { pid: process.pid, host: hostname(), since: Date.now(), token }
  const mine = JSON.stringify(me)
  const temp = `${file}.${token}.tmp`
  writeNew(temp, mine)
  try {
    for (let attempt = 0; attempt < 8; attempt++) {
      try {
        linkSync(temp, file)
        return token
      } catch (error) {
        if (codeOf(error) !== 'EEXIST') throw error
      }
      const raw = readRaw(file)
      if (raw === undefined) continue // dropped between the link and the read: try again
      const holder = parse(raw)
      if (holder && holder.pid === process.pid && holder.host === me.host) {
        throw new SessionError('SESSION_LOCKED', `session ${sessionId} is already open in this process`)
      }
      if (holder && alive(holder)) {
        throw new SessionError(
          'SESSION_LOCKED',
          `session ${sessionId} is held by another dsh process (pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}); close it first`,
        )
      }
      const outcome = takeOver(file, raw, temp)
      if (outcome === 'taken') return token
      if (outcome === 'busy')
        throw new SessionError(
          'SESSION_LOCKED',
          `session ${sessionId} is being taken over by another dsh process; try again`,
        )
      // 'changed': the lease is not the one we judged stale any more; judge it again.
    }
    throw new SessionError('SESSION_LOCKED', `session ${sessionId}: could not take the writer lease`)
  } finally {
    unlinkIfThere(temp)
  }
}

/**
 * Replaces the stale lease whose text is `stale` with ours, if this process wins its takeover claim: the claim
 * is created exclusively, so at most one live process holds the claim of one stale lease; a claim left by a
 * process that died is passed over by taking the next number.
 */
function takeOver(file: string, stale: string, temp: string): 'taken' | 'busy' | 'changed' {
  const digest = createHash('sha256').update(stale).digest('hex').slice(0, 16)
  const prefix = `${basename(file)}.takeover-${digest}-`
  for (let n = 0; ; n++) {
    const claim = join(dirname(file), `${prefix}${n}`)
    try {
      linkSync(temp, claim) // the claim is our whole lease text, never seen half-written
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error
      const claimer = parse(readRaw(claim) ?? '')
      if (claimer && alive(claimer)) return 'busy'
      continue // the claimer died (or its claim is gone already): the next number
    }
    try {
      // Under the claim: the lease must still be the very one judged stale, else someone took it already.
      if (readRaw(file) !== stale) return 'changed'
      renameSync(temp, file)
      return 'taken'
    } finally {
      // Claims on a lease that is gone are never used again: ours and those of the dead before it.
      for (const name of readdirSync(dirname(file)))
        if (name.startsWith(prefix)) unlinkIfThere(join(dirname(file), name))
    }
  }
}

export async function leaseIsLive(file: string): Promise<boolean> {
  try {
    const holder = parse(await readFile(file, 'utf8'))
    return !!holder && alive(holder)
  } catch {
    return false
  }
}

/**
 * Drops this process's lease: only while `lease` still carries `token` (a lease someone else holds now — taken
 * over, or written since — stays). The holder is alive while it drops, so no takeover can come in between.
 */
export function dropLease(file: string, token: LeaseToken): void {
  const raw = readRaw(file)
  if (raw === undefined || parse(raw)?.token !== token) return
  unlinkIfThere(file)
}
