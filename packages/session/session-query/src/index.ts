import { type Context, Service } from '@dsh/cordis'

declare module '@dsh/cordis' {
  interface Context {
    sessionQuery: SessionQuery
  }
}

/** Which part of the log a hit came from. */
export type HitSource = 'user' | 'assistant' | 'tool-call' | 'tool-result'

/** A stretch of `snippet.text` that matched the query, as UTF-16 offsets (`text.slice(start, end)`). */
export interface Highlight {
  start: number
  end: number
}

/** One session that matched, at its best-ranked event. */
export interface SearchHit {
  sessionId: string
  cwd: string
  /** The user's or generated title when the log has one. */
  title?: string
  /** The first user prompt, shortened: what a listing shows when there is no title. */
  firstPrompt?: string
  /** The event to open the session at (its `seq` in the log). */
  seq: number
  source: HitSource
  /** Epoch milliseconds of that event. */
  time: number
  /** A short excerpt of the event's text around the match, with the matched words marked. */
  snippet: { text: string; highlights: Highlight[] }
  /** Events of this session that matched (the hit shows the best one). */
  matches: number
}

export interface SearchOptions {
  /** Only sessions started in this directory (compared as given; callers pass a real path). */
  cwd?: string
  /** Most sessions returned, best first. */
  limit: number
}

/** What a (re)index pass did. */
export interface IndexReport {
  /** Sessions read from the start (new, rebuilt, or changed behind the index's back). */
  indexed: number
  /** Sessions whose new tail was read. */
  caughtUp: number
  /** Sessions dropped because their log is gone. */
  removed: number
  /** Events added to the index. */
  events: number
}

/**
 * Finds sessions by what was said and done in them (docs/architecture.md, "Finding sessions"). Owns: the
 * query and whatever index serves it. Must not own: the logs (they stay the truth; an index is derived and
 * rebuildable), what a surface shows, or a session's title (a log fact owned by whoever writes it).
 *
 * Words are matched as typed: a query is plain words and phrases, never a query language, so `"`, `*`,
 * `-` and `:` in it are text, not syntax. A query with no searchable word finds nothing.
 */
export abstract class SessionQuery extends Service {
  constructor(ctx: Context) {
    super(ctx, 'sessionQuery')
  }

  abstract search(query: string, options: SearchOptions): Promise<SearchHit[]>
  /** Brings the index up to date with the logs on disk. */
  abstract sync(): Promise<IndexReport>
  /** Throws the index away and builds it again from the logs. */
  abstract reindex(): Promise<IndexReport>
  /** Drops a deleted session from the index at once (not at the next catch-up). */
  abstract forget(sessionId: string): Promise<void>
}
