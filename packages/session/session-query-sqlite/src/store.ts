import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

/** Bumped whenever the tables below change: an index of another version is dropped and rebuilt. */
export const INDEX_VERSION = 1

/** What the index remembers of one log: how far it has read it, and how to tell it changed behind its back. */
export interface LogRow {
  session: string
  cwd: string
  cwd_real: string
  file: string
  bytes: number
  mtime: number
  head: string
  tail: string
  title: string | null
  first_prompt: string | null
  created_at: number
  updated_at: number
}

/**
 * Opens (creating or rebuilding) the index. `docs` holds one searchable text per event; `docs_fts` is an
 * external-content FTS5 table over it kept in step by triggers, so dropping a session is one indexed
 * `DELETE FROM docs WHERE session = ?`. WAL and a busy timeout let several dsh processes share the file.
 */
export function openStore(file: string, busyTimeoutMs: number): Database.Database {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma(`busy_timeout = ${Math.floor(busyTimeoutMs)}`)
  db.pragma('synchronous = NORMAL')
  // 64 MiB of page cache (SQLite's default is 2 MiB): a rebuild of a million events spends its time updating
  // FTS5 b-trees, and a cache that holds them cut the 100k-event build by a sixth (bench/sessions).
  db.pragma('cache_size = -65536')
  if (db.pragma('user_version', { simple: true }) !== INDEX_VERSION) {
    db.transaction(() => {
      db.exec('DROP TABLE IF EXISTS docs_fts; DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS logs;')
      db.exec(SCHEMA)
      db.pragma(`user_version = ${INDEX_VERSION}`)
    }).immediate()
  }
  return db
}

const SCHEMA = `
CREATE TABLE logs (
  session TEXT PRIMARY KEY, cwd TEXT NOT NULL, cwd_real TEXT NOT NULL, file TEXT NOT NULL,
  bytes INTEGER NOT NULL, mtime REAL NOT NULL, head TEXT NOT NULL, tail TEXT NOT NULL,
  title TEXT, first_prompt TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
);
CREATE TABLE docs (
  id INTEGER PRIMARY KEY, session TEXT NOT NULL, seq INTEGER NOT NULL, source TEXT NOT NULL,
  time INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE INDEX docs_by_session ON docs(session);
CREATE VIRTUAL TABLE docs_fts USING fts5(
  text, content = 'docs', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
CREATE TRIGGER docs_added AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER docs_removed AFTER DELETE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
`
