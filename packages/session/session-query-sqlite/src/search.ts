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
  private readonly snippet

  constructor(
    db: Database.Database,
    snippetTokens: number,
    private readonly candidatesPerHit: number,
  ) {
    this.best = db.prepare<{ expr: string; cwd: string | null; limit: number; candidates: number }, BestRow>(`
      WITH top AS (
        SELECT docs_fts.rowid AS id, docs_fts.rank AS score
        FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid JOIN logs l ON l.session = d.session
        WHERE docs_fts MATCH @expr AND (@cwd IS NULL OR l.cwd_real = @cwd)
        ORDER BY docs_fts.rank LIMIT @candidates
      ), ranked AS (
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
    this.snippet = db.prepare<{ expr: string; id: number }, { text: string }>(
      `SELECT snippet(docs_fts, 0, '${MARK_OPEN}', '${MARK_CLOSE}', '…', ${Math.floor(snippetTokens)}) AS text
         FROM docs_fts WHERE docs_fts MATCH @expr AND rowid = @id`,
    )
  }

  search(query: string, options: SearchOptions & { cwd?: string }): SearchHit[] {
    const expr = ftsExpression(query)
    if (!expr || options.limit <= 0) return []
    const limit = Math.floor(options.limit)
    const rows = this.best.all({ expr, cwd: options.cwd ?? null, limit, candidates: limit * this.candidatesPerHit })
    return rows.map((row) => ({
      sessionId: row.session,
      cwd: row.cwd,
      ...(row.title !== null ? { title: row.title } : {}),
      ...(row.first_prompt !== null ? { firstPrompt: row.first_prompt } : {}),
      seq: row.seq,
      source: row.source,
      time: row.time,
      snippet: parseSnippet(this.snippet.get({ expr, id: row.id })?.text ?? ''),
      matches: row.matches,
    }))
  }
}
