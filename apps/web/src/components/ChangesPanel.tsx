import { useCallback, useEffect, useState } from 'react'
import { History, X } from 'lucide-react'
import type { RewindDone, SessionChanges } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import { navigate } from '../lib/router.ts'
import { Diff, DiffStat } from './Diff.tsx'

const STATUS_LABEL = { added: 'added', deleted: 'deleted', modified: 'modified', unrecorded: 'not recorded' } as const

/**
 * What the session changed on disk (`sessions.changes`): each file with a numbered diff against the state
 * before the session or a chosen turn, and a rewind of every touched file to before a turn
 * (`sessions.rewind`). `logLength` reloads the list as the log grows.
 */
export function ChangesPanel({
  sessionId,
  logLength,
  running,
  onClose,
}: {
  sessionId: string
  logLength: number
  running: boolean
  onClose: () => void
}) {
  const [fromTurn, setFromTurn] = useState(1)
  const [changes, setChanges] = useState<SessionChanges>()
  const [error, setError] = useState<string>()
  const [rewindTo, setRewindTo] = useState(1)
  const [force, setForce] = useState(false)
  const [fork, setFork] = useState(false)
  const [outcome, setOutcome] = useState<RewindDone>()
  const [busy, setBusy] = useState(false)

  const load = useCallback(async () => {
    try {
      setChanges(await call('sessions.changes', { sessionId, fromTurn }))
      setError(undefined)
    } catch (failure) {
      setError(messageOf(failure))
    }
  }, [sessionId, fromTurn])
  useEffect(() => void load(), [load, logLength])

  const rewind = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const done = await call('sessions.rewind', { sessionId, toTurn: rewindTo, force, fork })
      setOutcome(done)
      if (done.forkedTo) navigate(`/s/${done.forkedTo}`)
      else await load()
    } catch (failure) {
      setError(messageOf(failure))
    } finally {
      setBusy(false)
    }
  }

  const turns = changes?.turns ?? 0
  const turnOptions = Array.from({ length: turns }, (_, at) => at + 1)
  return (
    <section className="changes-panel" aria-label="Changes" data-testid="changes-panel">
      <div className="changes-head">
        <strong>Changes</strong>
        <label className="small">
          since{' '}
          <select
            aria-label="Compare since"
            value={fromTurn}
            onChange={(event) => setFromTurn(Number(event.target.value))}
          >
            {(turnOptions.length ? turnOptions : [1]).map((turn) => (
              <option key={turn} value={turn}>
                {turn === 1 ? 'the session started' : `turn ${turn}`}
              </option>
            ))}
          </select>
        </label>
        <button className="icon-btn" onClick={onClose} aria-label="Close changes">
          <X size={14} />
        </button>
      </div>
      {error && (
        <div className="callout callout-error" data-testid="changes-error">
          {error}
        </div>
      )}
      {changes && !changes.files.length && (
        <p className="muted small">No file changed{fromTurn > 1 ? ` since turn ${fromTurn}` : ''}.</p>
      )}
      {changes?.notes.map((note) => (
        <p key={note} className="muted small" data-testid="changes-note">
          {note}
        </p>
      ))}
      {changes?.files.map((file) => (
        <div
          key={file.path}
          className="changed-file"
          data-testid="changed-file"
          data-path={file.path}
          data-status={file.status}
        >
          <div className="changed-file-head">
            <code>{file.path}</code> <span className="badge">{STATUS_LABEL[file.status]}</span>
            {file.patch && <DiffStat stats={{ added: file.added, removed: file.removed }} />}
          </div>
          {file.beforeText !== undefined && file.afterText !== undefined ? (
            <Diff before={file.beforeText} after={file.afterText} numbered />
          ) : (
            <p className="muted small">{file.note}</p>
          )}
        </div>
      ))}
      {turns > 0 && (
        <div className="rewind-row">
          <History size={14} />
          <label className="small">
            Rewind files to before{' '}
            <select
              aria-label="Rewind to before turn"
              value={rewindTo}
              onChange={(event) => setRewindTo(Number(event.target.value))}
            >
              {turnOptions.map((turn) => (
                <option key={turn} value={turn}>
                  turn {turn}
                </option>
              ))}
            </select>
          </label>
          <label className="small">
            <input type="checkbox" checked={force} onChange={(event) => setForce(event.target.checked)} /> overwrite
            files changed since
          </label>
          <label className="small">
            <input type="checkbox" checked={fork} onChange={(event) => setFork(event.target.checked)} /> fork the
            conversation there
          </label>
          <button
            className="btn"
            onClick={() => void rewind()}
            disabled={busy || running}
            title={running ? 'Stop the running turn first' : undefined}
          >
            Rewind
          </button>
        </div>
      )}
      {outcome && (
        <div className="rewind-outcome small" data-testid="rewind-outcome">
          <p>
            Restored {outcome.restored.length} file{outcome.restored.length === 1 ? '' : 's'} to before turn{' '}
            {outcome.toTurn}.
          </p>
          {outcome.conflicts.map((entry) => (
            <p key={entry.path} className="tone-error" data-testid="rewind-conflict" data-path={entry.path}>
              Not overwritten: <code>{entry.path}</code> — {entry.reason}
            </p>
          ))}
          {outcome.skipped.map((entry) => (
            <p key={entry.path} className="muted" data-testid="rewind-skipped">
              Skipped: <code>{entry.path}</code> — {entry.reason}
            </p>
          ))}
        </div>
      )}
    </section>
  )
}
