import { useState } from 'react'
import { Pencil, Trash2 } from 'lucide-react'
import type { SessionListItem } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import { navigate } from '../lib/router.ts'
import { labelOf, sessions } from '../lib/sessions.ts'

type Mode = { kind: 'idle' } | { kind: 'renaming'; title: string } | { kind: 'confirming' } | { kind: 'busy' }

/**
 * Rename and delete for one sidebar row (`sessions.rename`, `sessions.delete` of the web-sessions host). A
 * delete asks first, in the row: it removes the log, its subagent sessions and their files for good.
 */
export function SessionActions({ item, active }: { item: SessionListItem; active: boolean }) {
  const [mode, setMode] = useState<Mode>({ kind: 'idle' })
  const [error, setError] = useState<string | undefined>()
  const act = async (action: () => Promise<unknown>) => {
    setMode({ kind: 'busy' })
    setError(undefined)
    try {
      await action()
      setMode({ kind: 'idle' })
      void sessions.refresh()
    } catch (failure) {
      setError(messageOf(failure))
      setMode({ kind: 'idle' })
    }
  }

  if (mode.kind === 'renaming') {
    return (
      <form
        className="session-rename"
        onSubmit={(event) => {
          event.preventDefault()
          void act(() => call('sessions.rename', { sessionId: item.id, title: mode.title }))
        }}
      >
        <input
          autoFocus
          aria-label="New title"
          value={mode.title}
          onChange={(event) => setMode({ kind: 'renaming', title: event.target.value })}
          onKeyDown={(event) => event.key === 'Escape' && setMode({ kind: 'idle' })}
        />
        <button className="btn" type="submit" disabled={!mode.title.trim()}>
          Save
        </button>
      </form>
    )
  }
  if (mode.kind === 'confirming') {
    return (
      <div className="session-confirm" role="alertdialog" aria-label={`Delete ${labelOf(item)}`}>
        <span>Delete for good?</span>
        <button
          className="btn btn-danger-soft"
          onClick={() =>
            void act(async () => {
              await call('sessions.delete', { sessionId: item.id })
              if (active) navigate('/')
            })
          }
        >
          Delete
        </button>
        <button className="btn" onClick={() => setMode({ kind: 'idle' })}>
          Keep
        </button>
      </div>
    )
  }
  return (
    <>
      <div className="session-actions">
        <button
          className="icon-btn"
          aria-label="Rename session"
          title="Rename"
          disabled={mode.kind === 'busy'}
          onClick={() => setMode({ kind: 'renaming', title: labelOf(item) })}
        >
          <Pencil size={12} />
        </button>
        <button
          className="icon-btn"
          aria-label="Delete session"
          title="Delete"
          disabled={mode.kind === 'busy' || item.agent === 'running'}
          onClick={() => setMode({ kind: 'confirming' })}
        >
          <Trash2 size={12} />
        </button>
      </div>
      {error && (
        <div className="inline-error" role="alert">
          {error}
        </div>
      )}
    </>
  )
}
