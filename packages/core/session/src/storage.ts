import type { SessionEvent, SessionHeader } from './events.ts'

/** What a stored session looks like in a listing. */
export interface SessionSummary {
  id: string
  cwd: string
  createdAt: number
  updatedAt: number
  events: number
  turns: number
  /** The first user prompt, shortened. */
  firstPrompt?: string
  title?: string
  /** Who named it (`user` titles are never replaced by generated ones). */
  titleSource?: 'user' | 'model'
  /** Hidden from default lists (`session/archived`). */
  archived?: boolean
  /** `open` when the last turn never ended (a crash or a live writer). */
  status: 'idle' | 'open'
  /** Whether another process holds the writer lease right now. */
  live: boolean
  /** Set when the stored log fails the checks of opening it: what is wrong and where (it cannot be resumed). */
  damaged?: string
  parent?: { id: string; atSeq: number }
  /** A subagent's child session (its `subagent/parent`): the session that started it and the task's description. */
  subagentOf?: { id: string; description: string }
  /** Storage-side only (never shown): the stored log's size, so a verdict is not reused for other bytes. */
  storedBytes?: number
  /**
   * Storage-side only (never shown): the event kinds the stored log holds, sorted. A verdict then depends on how
   * those kinds are mounted, not on every kind of the profile (the SDK profile defines kinds the others do not:
   * without this, each profile would check every log again after another one listed them).
   */
  storedKinds?: string[]
  /**
   * Storage-side only (never shown): the verdict `ctx.sessions` last recorded for this log with
   * `recordCheck`. `key` names what it was checked against (its size, its last event and time, and how the
   * kinds it holds were mounted then); a listing reuses it while the key still matches instead of reading the log.
   */
  checked?: StoredCheck
}

/** A recorded outcome of checking a stored log: `problem` when it would not open. */
export interface StoredCheck {
  key: string
  problem?: string
}

/** A stored session as loaded: its events are checked by `ctx.sessions` before anyone reads them. */
export interface StoredLog {
  header: SessionHeader
  events: unknown[]
  /** Where the events are, so a bad one is named by file and line: event `i` is on line `firstLine + i`. */
  where?: { file: string; firstLine: number }
}

/**
 * The storage contract `ctx.sessions` writes through (the persistence seam implements it and registers
 * itself with `ctx.sessions.useStorage`). Owns: bytes on disk and the single-writer lease.
 */
export interface SessionStorage {
  /** Creates a new stored session and takes its lease. Refuses an id that exists. */
  create(header: SessionHeader): Promise<void>
  /** Takes the lease (refusing, by name, a session another process holds) and loads the session. */
  acquire(id: string): Promise<StoredLog>
  /** Loads without taking the lease (fork, show, replay). */
  read(id: string): Promise<StoredLog>
  /** Queues an event; durable after the next `flush`. */
  append(id: string, event: SessionEvent): void
  /** Makes every queued event durable. */
  flush(id: string): Promise<void>
  /** Flushes and releases the lease. */
  release(id: string): Promise<void>
  list(): Promise<SessionSummary[]>
  /**
   * Remembers the outcome of checking a stored, idle session (what `list` returns as `checked` until the log
   * changes), so the next process's listing need not read every log again. A cache: storage may decline
   * (the log moved on, another process writes it), and a failure to record never fails a listing.
   */
  recordCheck?(id: string, check: StoredCheck): Promise<void>
}

/** A session could not be created, loaded or written; `code` says why. */
export class SessionError extends Error {
  override name = 'SessionError'
  constructor(
    readonly code:
      | 'SESSION_NOT_FOUND'
      | 'SESSION_LOCKED'
      | 'SESSION_CORRUPT'
      | 'SESSION_EXISTS'
      | 'SESSION_CLOSED'
      | 'INVALID_EVENT'
      | 'UNKNOWN_KIND'
      | 'FORK_INSIDE_TURN'
      | 'FORK_OUT_OF_RANGE'
      | 'WORKSPACE_REFUSED',
    message: string,
  ) {
    super(message)
  }
}
