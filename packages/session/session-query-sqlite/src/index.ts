import { join } from 'node:path'
import type Database from 'better-sqlite3'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import type {} from '@dsh/session'
import { cwdKey } from '@dsh/session-persistence'
import { type IndexReport, type SearchHit, type SearchOptions, SessionQuery } from '@dsh/session-query'
import { emptyReport, Indexer, LOG_FILE, realOrSame } from './indexer.ts'
import { Searcher } from './search.ts'
import { openStore } from './store.ts'

export { ftsExpression, parseSnippet } from './query.ts'

export interface Config {
  file?: string
  sessionsDir?: string
  debounceMs: number
  syncBeforeSearch: boolean
  maxTextChars: number
  promptChars: number
  snippetTokens: number
  busyTimeoutMs: number
  sessionsPerTransaction: number
  candidatesPerHit: number
  rankedMatches: number
}

/**
 * `ctx.sessionQuery` on SQLite FTS5 (docs/architecture.md, "Finding sessions"). The index is a cache of the
 * JSONL logs: opened on first use, caught up before every search, fed by live sessions after a quiet
 * `debounceMs` (never inside a turn's step), and rebuilt from nothing by `reindex()`.
 */
export default class SqliteSessionQuery extends SessionQuery {
  static inject = ['app', 'sessions']
  static Config: Schema<Config> = Schema.object({
    file: Schema.string().description('The index database (default: $DSH_HOME/index/sessions.sqlite).'),
    sessionsDir: Schema.string().description(
      'Where the session logs are (default: $DSH_HOME/sessions; set it with the jsonl persistence `dir`).',
    ),
    debounceMs: Schema.natural()
      .default(1000)
      .description("Quiet time after a live session's last event before its new events are indexed."),
    syncBeforeSearch: Schema.boolean()
      .default(true)
      .description('Catch the index up with the logs on disk before each search (sessions other processes wrote).'),
    maxTextChars: Schema.natural()
      .min(1)
      .default(20_000)
      .description("Characters of one event's text (a message, a tool output) kept in the index."),
    promptChars: Schema.natural().min(8).default(120).description('Characters of the first prompt kept for hits.'),
    snippetTokens: Schema.natural().min(1).max(64).default(12).description("Words in a hit's snippet."),
    busyTimeoutMs: Schema.natural()
      .default(5000)
      .description('How long to wait for another dsh process writing the index.'),
    candidatesPerHit: Schema.natural()
      .min(1)
      .default(50)
      .description(
        'Best-ranked matching events looked at per hit asked for (limit × this), before grouping them by session.',
      ),
    rankedMatches: Schema.natural()
      .min(1)
      .default(20_000)
      .description(
        'A query matching more events than this lists the newest matches instead of ranking them all by bm25 (a very common word).',
      ),
    sessionsPerTransaction: Schema.natural()
      .min(1)
      .default(50)
      .description(
        'Changed logs read in one index transaction (larger: faster rebuilds, longer waits for other processes).',
      ),
  })

  private store: { db: Database.Database; indexer: Indexer; searcher: Searcher } | undefined
  private readonly sessionsDir: string
  private readonly waiting = new Map<string, string>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    this.sessionsDir = config.sessionsDir ?? join(ctx.app.home, 'sessions')
    // Only remembers which session moved: the reading happens later, outside the turn.
    ctx.on('session/event', (session) => {
      this.waiting.set(session.id, session.cwd)
      if (this.timer) this.timer.refresh()
      else {
        this.timer = setTimeout(() => this.indexWaiting(), config.debounceMs)
        this.timer.unref()
      }
    })
    ctx.effect(
      () => () => {
        if (this.timer) clearTimeout(this.timer)
        this.store?.db.close()
        this.store = undefined
      },
      'close the session index',
    )
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const store = this.open()
    if (this.config.syncBeforeSearch) {
      // This process's own sessions may still hold a batch in memory: what was said must be findable now.
      for (const id of this.waiting.keys()) await this.ctx.sessions.get(id)?.flush()
      store.indexer.syncAll()
    }
    return store.searcher.search(query, {
      limit: options.limit,
      ...(options.cwd !== undefined ? { cwd: realOrSame(options.cwd) } : {}),
    })
  }

  async sync(): Promise<IndexReport> {
    return this.open().indexer.syncAll()
  }

  async reindex(): Promise<IndexReport> {
    const store = this.open()
    store.indexer.clear()
    return store.indexer.syncAll()
  }

  async forget(sessionId: string): Promise<void> {
    this.waiting.delete(sessionId)
    this.open().indexer.forgetSession(sessionId)
  }

  /** The sessions that moved since the last pass, read from where the index left each. */
  private indexWaiting() {
    this.timer = undefined
    const waiting = Array.from(this.waiting)
    this.waiting.clear()
    try {
      const store = this.open()
      const report = emptyReport()
      for (const [id, cwd] of waiting)
        store.indexer.syncLog(id, join(this.sessionsDir, cwdKey(cwd), id, LOG_FILE), report)
    } catch (error: any) {
      // The index is a cache: a failure here loses no fact, and the next search catches up from the logs.
      this.ctx.logger('session-query').warn('indexing live sessions failed: %s', error?.message ?? error)
    }
  }

  private open() {
    if (!this.store) {
      const db = openStore(
        this.config.file ?? join(this.ctx.app.home, 'index', 'sessions.sqlite'),
        this.config.busyTimeoutMs,
      )
      this.store = {
        db,
        indexer: new Indexer(db, this.sessionsDir, {
          maxTextChars: this.config.maxTextChars,
          promptChars: this.config.promptChars,
          sessionsPerTransaction: this.config.sessionsPerTransaction,
        }),
        searcher: new Searcher(db, this.config.snippetTokens, this.config.candidatesPerHit, this.config.rankedMatches),
      }
    }
    return this.store
  }
}
