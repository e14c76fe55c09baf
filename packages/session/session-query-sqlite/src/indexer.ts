import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import type { IndexReport } from '@dsh/session-query'
import { foldFacts, indexedText, type SessionFacts } from './extract.ts'
import { LogReader } from './log-reader.ts'
import type { LogRow } from './store.ts'

export const LOG_FILE = 'session.jsonl'

export interface IndexLimits {
  /** Characters of one event's text kept in the index. */
  maxTextChars: number
  /** Characters of the first prompt kept for listings. */
  promptChars: number
  /** Changed logs read in one transaction. */
  sessionsPerTransaction: number
}

export function emptyReport(): IndexReport {
  return { indexed: 0, caughtUp: 0, removed: 0, events: 0 }
}

/**
 * Keeps the index in step with the logs under `sessionsDir` (`<cwd-key>/<id>/session.jsonl`). Per log it
 * remembers the byte length and mtime it has read, a fingerprint of the header line and of the bytes before
 * that length; a log that only grew is read from there, any other change is read again from the start, and
 * a log that is gone leaves the index. The logs stay the truth: nothing here is ever written back.
 */
export class Indexer {
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    private readonly sessionsDir: string,
    private readonly limits: IndexLimits,
  ) {
    this.statements = {
      row: db.prepare<[string], LogRow>('SELECT * FROM logs WHERE session = ?'),
      rows: db.prepare<[], Pick<LogRow, 'session' | 'file' | 'bytes' | 'mtime'>>(
        'SELECT session, file, bytes, mtime FROM logs',
      ),
      dropDocs: db.prepare<[string]>('DELETE FROM docs WHERE session = ?'),
      dropLog: db.prepare<[string]>('DELETE FROM logs WHERE session = ?'),
      addDoc: db.prepare<[string, number, string, number, string]>(
        'INSERT INTO docs(session, seq, source, time, text) VALUES (?, ?, ?, ?, ?)',
      ),
      saveLog: db.prepare<LogRow>(
        `INSERT INTO logs VALUES (@session, @cwd, @cwd_real, @file, @bytes, @mtime, @head, @tail, @title, @first_prompt, @created_at, @updated_at)
         ON CONFLICT(session) DO UPDATE SET cwd = @cwd, cwd_real = @cwd_real, file = @file, bytes = @bytes, mtime = @mtime, head = @head,
           tail = @tail, title = @title, first_prompt = @first_prompt, created_at = @created_at, updated_at = @updated_at`,
      ),
    }
  }

  /**
   * Every log on disk, and every indexed session whose log is gone. Unchanged logs (same size and mtime)
   * cost a stat and a lookup, outside any transaction; changed ones are read in transactions of
   * `sessionsPerTransaction`, so a rebuild does not pay one commit per session.
   */
  syncAll(): IndexReport {
    const report = emptyReport()
    const known = new Map(this.statements.rows.all().map((row) => [row.session, row]))
    const changed: { id: string; file: string; mtimeMs: number }[] = []
    for (const log of this.logsOnDisk()) {
      const row = known.get(log.id)
      known.delete(log.id)
      if (!row || row.file !== log.file || row.bytes !== log.size || row.mtime !== log.mtimeMs) changed.push(log)
    }
    // Oldest log first, so event rowids follow time (a search with too many matches to rank takes the highest).
    // File times tick in jiffies (4 ms here), so logs written in one tick tie; their session ids start with the
    // creation time and break the tie (libuv happens to list a folder sorted by name; this does not rely on it).
    changed.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    for (let i = 0; i < changed.length; i += this.limits.sessionsPerTransaction) {
      const batch = changed.slice(i, i + this.limits.sessionsPerTransaction)
      this.db
        .transaction(() => {
          for (const { id, file } of batch) this.syncLogLocked(id, file, report)
        })
        .immediate()
    }
    for (const session of known.keys()) this.forget(session, report)
    return report
  }

  /** One session's log (a live session's new events, off the turn's path). */
  syncLog(id: string, file: string, report: IndexReport = emptyReport()): IndexReport {
    if (!this.unchanged(id, file)) this.db.transaction(() => this.syncLogLocked(id, file, report)).immediate()
    return report
  }

  private unchanged(id: string, file: string): boolean {
    const row = this.statements.row.get(id)
    if (!row || row.file !== file) return false
    try {
      const stat = statSync(file)
      return row.bytes === stat.size && row.mtime === stat.mtimeMs
    } catch {
      return false
    }
  }

  /** Drops one session (it was deleted). */
  forgetSession(id: string): void {
    this.forget(id, emptyReport())
  }

  /** Drops everything: the next `syncAll` reads every log from the start. */
  clear(): void {
    this.db
      .transaction(() => {
        this.db.exec('DELETE FROM docs; DELETE FROM logs;')
        this.db.exec("INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')")
      })
      .immediate()
  }

  private syncLogLocked(id: string, file: string, report: IndexReport) {
    let stat
    try {
      stat = statSync(file)
    } catch {
      return this.forget(id, report)
    }
    const row = this.statements.row.get(id)
    if (row && row.file === file && row.bytes === stat.size && row.mtime === stat.mtimeMs) return
    const reader = new LogReader(file)
    try {
      const head = reader.head()
      const grew =
        row !== undefined &&
        row.file === file &&
        stat.size > row.bytes &&
        row.head === head &&
        reader.tail(row.bytes) === row.tail
      if (!grew) this.statements.dropDocs.run(id)
      const offset = grew ? row.bytes : 0
      const { lines, end } = reader.linesFrom(offset, stat.size)
      const facts: SessionFacts = grew
        ? {
            ...(row.title !== null ? { title: row.title } : {}),
            ...(row.first_prompt !== null ? { firstPrompt: row.first_prompt } : {}),
          }
        : {}
      let header: { id?: string; cwd?: string; createdAt?: number } | undefined = grew
        ? { cwd: row.cwd, createdAt: row.created_at }
        : undefined
      let updatedAt = grew ? row.updated_at : 0
      for (const [i, line] of lines.entries()) {
        const event = parseLine(line)
        if (!event) continue // a bad line is the log's damage to report, not the index's; the rest stays findable
        if (!grew && i === 0) {
          header = event
          continue
        }
        if (typeof event.seq !== 'number' || typeof event.type !== 'string') continue
        foldFacts(facts, event, this.limits.promptChars)
        if (typeof event.time === 'number') updatedAt = event.time
        const text = indexedText(event, this.limits.maxTextChars)
        if (text) {
          this.statements.addDoc.run(
            id,
            event.seq,
            text.source,
            typeof event.time === 'number' ? event.time : 0,
            text.text,
          )
          report.events++
        }
      }
      if (!header || (header.id !== undefined && header.id !== id) || typeof header.cwd !== 'string') {
        // Not a session log (yet): remember nothing, so the next pass looks again.
        this.statements.dropDocs.run(id)
        this.statements.dropLog.run(id)
        return
      }
      const createdAt = typeof header.createdAt === 'number' ? header.createdAt : 0
      this.statements.saveLog.run({
        session: id,
        cwd: header.cwd,
        cwd_real: realOrSame(header.cwd),
        file,
        bytes: end,
        // A log read only up to a line still being written must be looked at again: keep no mtime then.
        mtime: end === stat.size ? stat.mtimeMs : -1,
        head,
        tail: reader.tail(end),
        title: facts.title ?? null,
        first_prompt: facts.firstPrompt ?? null,
        created_at: createdAt,
        updated_at: updatedAt || createdAt,
      })
      if (grew) report.caughtUp++
      else report.indexed++
    } finally {
      reader.close()
    }
  }

  private forget(id: string, report: IndexReport) {
    this.db
      .transaction(() => {
        this.statements.dropDocs.run(id)
        if (this.statements.dropLog.run(id).changes) report.removed++
      })
      .immediate()
  }

  /** Every `<key>/<id>/session.jsonl` with its size and mtime: one stat a log, nothing else. */
  private *logsOnDisk(): Generator<{ id: string; file: string; size: number; mtimeMs: number }> {
    if (!existsSync(this.sessionsDir)) return
    for (const key of readdirSync(this.sessionsDir)) {
      let ids: string[]
      try {
        ids = readdirSync(join(this.sessionsDir, key))
      } catch {
        continue
      }
      for (const id of ids) {
        const file = join(this.sessionsDir, key, id, LOG_FILE)
        const stat = statSync(file, { throwIfNoEntry: false })
        if (stat?.isFile()) yield { id, file, size: stat.size, mtimeMs: stat.mtimeMs }
      }
    }
  }
}

function parseLine(line: string): any {
  try {
    const value = JSON.parse(line)
    return value !== null && typeof value === 'object' ? value : undefined
  } catch {
    return undefined
  }
}

/** Directories compare by their real location (a temp dir reached through a symlink is the same). */
export function realOrSame(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
