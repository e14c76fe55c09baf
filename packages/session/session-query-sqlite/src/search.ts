import type Database from 'better-sqlite3'
import type { HitSource, SearchHit, SearchOptions } from '@dsh/session-query'
import { MARK_CLOSE, MARK_OPEN } from './extract.ts'
import { ftsExpression, parseSnippet } from './query.ts'

interface BestRow {
  id: number
  session: string
  seq: number
  source: HitSource
  time: number
  matches: number
  cwd: string
  title: string | null
  first_prompt: string | null
}

/**
 * Ranked search: each matching event scores by bm25, a session ranks by its best event (ties: the later one),
 * and only the returned hits pay for a snippet. Only the best `limit × candidatesPerHit` events are grouped
 * (a word in most of a big index would otherwise sort every match); `matches` counts within them.
 */
export class Searcher {
  private readonly best
  private readonly tooMany
  private readonly snippet

  constructor(
    db: Database.Database,
    snippetTokens: number,
    private readonly candidatesPerHit: number,
    private readonly rankedMatches: number,
  ) {
    // The candidates: the best-ranked matching events, in this workspace or in all of them. Without a workspace the
    // FTS5 table is asked alone (no lookups per match). A query matching more than `rankedMatches` events takes
    // the newest instead: bm25 over every match of a word found in a quarter of a million-event index costs a
    // third of a second (bench/sessions) and ranks little, and FTS5 walks rowids newest first for free.
    const joined =
      'FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid JOIN logs l ON l.session = d.session WHERE docs_fts MATCH @expr AND l.cwd_real = @cwd'
    const candidates = {
      rankedInWorkspace: `SELECT docs_fts.rowid AS id, docs_fts.rank AS score ${joined} ORDER BY docs_fts.rank LIMIT @candidates`,
      rankedEverywhere:
        'SELECT rowid AS id, rank AS score FROM docs_fts WHERE docs_fts MATCH @expr ORDER BY rank LIMIT @candidates',
      newestInWorkspace: `SELECT docs_fts.rowid AS id, -docs_fts.rowid AS score ${joined} ORDER BY docs_fts.rowid DESC LIMIT @candidates`,
      newestEverywhere:
        'SELECT rowid AS id, -rowid AS score FROM docs_fts WHERE docs_fts MATCH @expr ORDER BY rowid DESC LIMIT @candidates',
    }
    const best = (top: string) =>
      db.prepare<{ expr: string; cwd?: string; limit: number; candidates: number }, BestRow>(`
      WITH top AS (${top}), ranked AS (
        SELECT d.id, d.session, d.seq, d.source, d.time, t.score,
               row_number() OVER (PARTITION BY d.session ORDER BY t.score, d.seq DESC) AS n,
               count(*) OVER (PARTITION BY d.session) AS matches
        FROM top t JOIN docs d ON d.id = t.id
      )
      SELECT r.id, r.session, r.seq, r.source, r.time, r.matches, l.cwd, l.title, l.first_prompt
      FROM ranked r JOIN logs l ON l.session = r.session
      WHERE r.n = 1
      ORDER BY r.score, r.time DESC
      LIMIT @limit`)
    this.best = {
      ranked: { inWorkspace: best(candidates.rankedInWorkspace), everywhere: best(candidates.rankedEverywhere) },
      newest: { inWorkspace: best(candidates.newestInWorkspace), everywhere: best(candidates.newestEverywhere) },
    }
    // Counting stops early: all it must tell is whether there are more than `rankedMatches`.
    this.tooMany = db.prepare<{ expr: string; over: number }, { n: number }>(
      'SELECT count(*) AS n FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH @expr LIMIT @over)',
    )
    // The CAST is load-bearing: better-sqlite3 binds a JavaScript number as a REAL, and FTS5 then drops the rowid
    // constraint without a word, so every hit got the snippet of the first matching event in the whole index.
    this.snippet = db.prepare<{ expr: string; id: number }, { text: string }>(
      `SELECT snippet(docs_fts, 0, '${MARK_OPEN}', '${MARK_CLOSE}', '…', ${Math.floor(snippetTokens)}) AS text
         FROM docs_fts WHERE docs_fts MATCH @expr AND rowid = CAST(@id AS INTEGER)`,
    )
  }

  search(query: string, options: SearchOptions & { cwd?: string }): SearchHit[] {
    const expr = ftsExpression(query)
    if (!expr || options.limit <= 0) return []
    const limit = Math.floor(options.limit)
    const candidates = limit * this.candidatesPerHit
    const order =
      this.tooMany.get({ expr, over: this.rankedMatches + 1 })!.n > this.rankedMatches
        ? this.best.newest
        : this.best.ranked
    const rows =
      options.cwd === undefined
        ? order.everywhere.all({ expr, limit, candidates })
        : order.inWorkspace.all({ expr, cwd: options.cwd, limit, candidates })
    // The snippet is marked with the words as typed when the event has them whole: FTS5 rebuilds a prefix's merged
    // list of events for every statement, which for a frequent word cost ~8 ms a snippet at a million events.
    const whole = ftsExpression(query, 'whole')!
    const snippetOf = (id: number) => this.snippet.get({ expr: whole, id }) ?? this.snippet.get({ expr, id })
    return rows.map((row) => ({
      sessionId: row.session,
      cwd: row.cwd,
      ...(row.title !== null ? { title: row.title } : {}),
      ...(row.first_prompt !== null ? { firstPrompt: row.first_prompt } : {}),
      seq: row.seq,
      source: row.source,
      time: row.time,
      snippet: parseSnippet(snippetOf(row.id)?.text ?? ''),
      matches: row.matches,
    }))
  }
}
