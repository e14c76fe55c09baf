import { useEffect, useRef, useState, type ReactNode } from 'react'
import { Coins, MessageSquare, Plus, Search, Settings } from 'lucide-react'
import { useEmitter } from '../lib/emitter.ts'
import { ago } from '../lib/format.ts'
import { useEscapeCloses } from '../lib/keys.ts'
import { navigate } from '../lib/router.ts'
import { labelOf, sessions } from '../lib/sessions.ts'
import { useTextSearch } from './Sidebar.tsx'

/** How many sessions the palette lists for a query (the sidebar lists them all). */
const MAX_SESSIONS = 12

interface Entry {
  key: string
  icon: ReactNode
  label: ReactNode
  hint?: string
  run: () => void
}

/** The actions a query matches by name; an empty query lists them all. */
function actionsFor(query: string): Entry[] {
  const all: (Entry & { name: string })[] = [
    { key: 'new', name: 'New session', icon: <Plus size={14} />, label: 'New session', run: () => navigate('/') },
    {
      key: 'settings',
      name: 'Settings',
      icon: <Settings size={14} />,
      label: 'Settings',
      run: () => navigate('/settings'),
    },
    { key: 'usage', name: 'Usage', icon: <Coins size={14} />, label: 'Usage', run: () => navigate('/usage') },
  ]
  const wanted = query.trim().toLowerCase()
  return all.filter((entry) => !wanted || entry.name.toLowerCase().includes(wanted))
}

/**
 * Ctrl+K / Cmd+K: one box to start a session, open Settings or Usage, or switch to a session by typing part of
 * its title (matched here at once) or of its messages (the host's search, as the sidebar's). ↑/↓ choose,
 * Enter opens, Esc or a click outside closes.
 */
export function Palette({ onClose }: { onClose: () => void }) {
  useEmitter(sessions.changed)
  useEscapeCloses(true, onClose)
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => input.current?.focus(), [])
  const { hits, searching } = useTextSearch(query)

  const wanted = query.trim().toLowerCase()
  const byTitle = sessions.items
    .filter((item) => !item.archived && (!wanted || labelOf(item).toLowerCase().includes(wanted)))
    .sort((a, b) => b.updatedAt - a.updatedAt)
    .slice(0, MAX_SESSIONS)
  const titled = new Set(byTitle.map((item) => item.id))
  const open = (href: string) => () => navigate(href)
  const entries: Entry[] = [
    ...actionsFor(query),
    ...byTitle.map((item) => ({
      key: `s:${item.id}`,
      icon: <MessageSquare size={14} />,
      label: labelOf(item),
      hint: ago(item.updatedAt),
      run: open(`/s/${item.id}`),
    })),
    ...hits
      .filter((hit) => !titled.has(hit.sessionId))
      .map((hit) => {
        const item = sessions.items.find((candidate) => candidate.id === hit.sessionId)
        return {
          key: `h:${hit.sessionId}:${hit.seq}`,
          icon: <Search size={14} />,
          label: (
            <>
              {item ? labelOf(item) : hit.sessionId}
              <span className="muted small palette-snippet"> — {hit.snippet}</span>
            </>
          ),
          run: open(`/s/${hit.sessionId}${hit.seq !== undefined ? `?seq=${hit.seq}` : ''}`),
        }
      }),
  ]
  const at = entries.length ? Math.min(active, entries.length - 1) : -1
  const choose = (entry: Entry | undefined) => {
    if (!entry) return
    onClose()
    entry.run()
  }

  return (
    <div className="palette-scrim" onMouseDown={onClose}>
      <div
        className="palette"
        role="dialog"
        aria-label="Command palette"
        data-testid="palette"
        onMouseDown={(event) => event.stopPropagation()}
      >
        <input
          ref={input}
          className="palette-input"
          data-esc="pass"
          aria-label="Search sessions and actions"
          placeholder="New session, or type part of a session's title or messages…"
          spellCheck={false}
          value={query}
          role="combobox"
          aria-expanded
          aria-controls="palette-list"
          aria-activedescendant={at >= 0 ? `palette-${at}` : undefined}
          onChange={(event) => {
            setQuery(event.target.value)
            setActive(0)
          }}
          onKeyDown={(event) => {
            if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && entries.length) {
              event.preventDefault()
              setActive((event.key === 'ArrowDown' ? at + 1 : at - 1 + entries.length) % entries.length)
            } else if (event.key === 'Enter' && !event.nativeEvent.isComposing) {
              event.preventDefault()
              choose(entries[at])
            }
          }}
        />
        <ul className="palette-list" id="palette-list" role="listbox">
          {entries.map((entry, index) => (
            <li
              key={entry.key}
              id={`palette-${index}`}
              role="option"
              aria-selected={index === at}
              className={index === at ? 'active' : undefined}
              data-testid="palette-entry"
              onMouseEnter={() => setActive(index)}
              onClick={() => choose(entry)}
            >
              <span className="palette-icon">{entry.icon}</span>
              <span className="palette-label">{entry.label}</span>
              {entry.hint && <span className="muted small">{entry.hint}</span>}
            </li>
          ))}
          {!entries.length && (
            <li className="muted palette-empty">{searching ? 'Searching…' : 'No session or action matches.'}</li>
          )}
        </ul>
      </div>
    </div>
  )
}
