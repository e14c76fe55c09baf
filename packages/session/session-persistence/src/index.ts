import { createHash } from 'node:crypto'
import { type Context, Service } from '@dsh/cordis'
import type { SessionEvent, SessionHeader, SessionStorage, SessionSummary, StoredLog } from '@dsh/session'

declare module '@dsh/cordis' {
  interface Context {
    sessionPersistence: SessionPersistence
  }
}

/**
 * Durable storage of session logs (docs/architecture.md, "The session log"). A provider extends this class;
 * constructing it registers it as the storage of `ctx.sessions`. Owns: the bytes, their durability and the
 * single-writer lease. Must not own: what events mean (repair and fork live in `@dsh/session`).
 */
export abstract class SessionPersistence extends Service implements SessionStorage {
  static inject = ['sessions']

  constructor(ctx: Context) {
    super(ctx, 'sessionPersistence')
    ctx.sessions.useStorage(ctx, this)
  }

  abstract create(header: SessionHeader): Promise<void>
  abstract acquire(id: string): Promise<StoredLog>
  abstract read(id: string): Promise<StoredLog>
  abstract append(id: string, event: SessionEvent): void
  abstract flush(id: string): Promise<void>
  abstract release(id: string): Promise<void>
  abstract list(): Promise<SessionSummary[]>
  /**
   * Deletes everything stored for these sessions. Takes every lease first: when one is held (by another
   * process, or open in this one) or an id is unknown, nothing is deleted and that session is named.
   */
  abstract remove(ids: readonly string[]): Promise<void>
  /**
   * The local folder holding everything stored for a session (its log, attachments, checkpoints): what an
   * export packs. Refuses an id that is not stored.
   */
  abstract folderOf(id: string): Promise<string>
  /**
   * The folder a new session with this header is stored in, for an import to fill (it does not exist yet).
   * Refuses (`SESSION_EXISTS`) an id that is already stored.
   */
  abstract folderFor(header: SessionHeader): Promise<string>
  /**
   * A value derived from a stored session's events (a usage digest), kept beside its listing facts until the
   * log changes, so a later process need not read the log again. `version` names the derivation: a value kept
   * by another one is derived again. A cache: a storage without it leaves the caller to read the log.
   */
  derived?<T>(id: string, name: string, version: string, derive: (events: readonly SessionEvent[]) => T): Promise<T>
}

/**
 * A readable, collision-free folder name for a working directory: the path's last segments plus a short
 * hash of the whole path (`/home/me/src/app` → `src-app-1a2b3c4d`).
 */
export function cwdKey(cwd: string): string {
  const hash = createHash('sha256').update(cwd).digest('hex').slice(0, 8)
  const tail = cwd
    .split(/[\\/]+/)
    .filter(Boolean)
    .slice(-2)
    .join('-')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
  return `${tail || 'root'}-${hash}`
}
