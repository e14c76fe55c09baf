import type { Context } from '@dsh/cordis'
import type { SessionEvent, SessionHeader } from '@dsh/session'

export interface ReadLimits {
  readCacheSessions: number
  readCacheMs: number
}

interface Cached {
  header: SessionHeader
  events: readonly SessionEvent[]
  at: number
}

/**
 * Reads a session's events for the page: a session live in this process from memory, a stored one from
 * storage, kept for `readCacheMs` so paging back through a long log parses it once. Only a few stored
 * logs are kept (`readCacheSessions`): they can be large.
 */
export class SessionReader {
  private readonly cache = new Map<string, Cached>()

  constructor(
    private readonly ctx: Context,
    private readonly limits: ReadLimits,
  ) {}

  /** Drops a deleted or renamed session's cached log. */
  forget(id: string): void {
    this.cache.delete(id)
  }

  async read(id: string): Promise<{ header: SessionHeader; events: readonly SessionEvent[]; live: boolean }> {
    const live = this.ctx.sessions.get(id)
    if (live) {
      this.cache.delete(id)
      return { header: live.header, events: live.events, live: true }
    }
    const hit = this.cache.get(id)
    if (hit && Date.now() - hit.at < this.limits.readCacheMs)
      return { header: hit.header, events: hit.events, live: false }
    const { header, events } = await this.ctx.sessions.read(id)
    this.cache.delete(id)
    this.cache.set(id, { header, events, at: Date.now() })
    while (this.cache.size > this.limits.readCacheSessions) this.cache.delete(this.cache.keys().next().value!)
    return { header, events, live: false }
  }
}
