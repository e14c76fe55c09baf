// What a session archive may hold (docs/architecture.md, "Finding sessions"): checked for every entry before
// anything is written, and again by the extraction's filter.
import { SESSION_ID } from './delete.ts'

/** The archive's table of contents, at its root. */
export const MANIFEST = 'dsh-export.json'
export const ARCHIVE_FORMAT = 'dsh-session-export'

export interface Manifest {
  format: typeof ARCHIVE_FORMAT
  version: 1
  /** The session exported; the others are its subagent children. */
  session: string
  sessions: string[]
}

const SEGMENT = /^[A-Za-z0-9._-]{1,200}$/
const ENTRY_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory'])

/**
 * Why an entry cannot be extracted, or undefined when it can: only plain files and folders, at
 * `dsh-export.json`, `sessions/<id>/…` or `spill/<id>/…`, each name plain (no `..`, no absolute path, no
 * backslash). Links of either kind are refused: one could point outside the target.
 */
export function entryProblem(path: string, type: string): string | undefined {
  if (!ENTRY_TYPES.has(type)) return `${path}: a ${type} entry (only files and folders are accepted)`
  const segments = path.replace(/\/$/, '').split('/')
  if (
    path.startsWith('/') ||
    path.includes('\\') ||
    segments.some((segment) => !SEGMENT.test(segment) || segment === '.' || segment === '..')
  )
    return `${path}: not a plain relative path`
  const [top, id] = segments
  if (top === MANIFEST && segments.length === 1 && type !== 'Directory') return undefined
  if ((top === 'sessions' || top === 'spill') && (id === undefined || SESSION_ID.test(id))) return undefined
  return `${path}: not part of a dsh session archive`
}

/** Why a parsed manifest is not one, or undefined. */
export function manifestProblem(value: unknown): string | undefined {
  const manifest = value as Partial<Manifest> | undefined
  if (!manifest || typeof manifest !== 'object' || manifest.format !== ARCHIVE_FORMAT || manifest.version !== 1)
    return `${MANIFEST}: not a ${ARCHIVE_FORMAT} version 1 manifest`
  if (
    !Array.isArray(manifest.sessions) ||
    !manifest.sessions.length ||
    !manifest.sessions.every((id) => typeof id === 'string' && SESSION_ID.test(id))
  )
    return `${MANIFEST}: "sessions" must list session ids`
  if (typeof manifest.session !== 'string' || !manifest.sessions.includes(manifest.session))
    return `${MANIFEST}: "session" must be one of "sessions"`
  return undefined
}
