import { useEffect, useMemo, useState, type ReactNode } from 'react'
import {
  Bot,
  ChevronDown,
  ChevronRight,
  Coins,
  Folder,
  GitBranch,
  Loader2,
  Lock,
  LogOut,
  Plus,
  Search,
  Settings,
  ShieldAlert,
  X,
} from 'lucide-react'
import type { SearchHit, SessionListItem } from '@dsh/web-protocol'
import { call } from '../lib/api.ts'
import { useEmitter } from '../lib/emitter.ts'
import { ago, basename, shortPath } from '../lib/format.ts'
import { navigate, type Route } from '../lib/router.ts'
import { labelOf, sessions } from '../lib/sessions.ts'
import { ancestorsOf, anyIn, sessionTree, type SessionNode } from '../lib/session-tree.ts'
import { stream } from '../lib/stream.ts'
import { SessionActions } from './SessionActions.tsx'

const SEARCH_DELAY_MS = 200

interface Group {
  cwd: string
  nodes: SessionNode[]
  newest: number
}

/** The top-level rows by workspace, newest first; a parent counts as new as its newest child. */
function groupByWorkspace(roots: SessionNode[]): Group[] {
  const groups = new Map<string, Group>()
  const newestIn = (node: SessionNode): number =>
    Math.max(node.item.updatedAt, ...node.children.map((child) => newestIn(child)))
  for (const node of roots) {
    const group = groups.get(node.item.cwd) ?? { cwd: node.item.cwd, nodes: [], newest: 0 }
    group.nodes.push(node)
    group.newest = Math.max(group.newest, newestIn(node))
    groups.set(node.item.cwd, group)
  }
  for (const group of groups.values()) group.nodes.sort((a, b) => newestIn(b) - newestIn(a))
  return [...groups.values()].sort((a, b) => b.newest - a.newest)
}

/** Text search on the host (titles are filtered here at once; message text needs the logs). */
export function useTextSearch(query: string): { hits: SearchHit[]; searching: boolean } {
  const [state, setState] = useState<{ query: string; hits: SearchHit[] }>({ query: '', hits: [] })
  const trimmed = query.trim()
  useEffect(() => {
    if (!trimmed) return
    let live = true
    const timer = setTimeout(() => {
      call('sessions.search', { query: trimmed }).then(
        (result) => live && setState({ query: trimmed, hits: result.hits }),
        () => live && setState({ query: trimmed, hits: [] }),
      )
    }, SEARCH_DELAY_MS)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [trimmed])
  return { hits: trimmed && state.query === trimmed ? state.hits : [], searching: !!trimmed && state.query !== trimmed }
}

/** A session's address; a search hit's opens it at the event that matched. */
const hrefOf = (id: string, seq: number | undefined) => `/s/${id}${seq !== undefined ? `?seq=${seq}` : ''}`

/** A hit's excerpt with the matched words marked (the host's index gives their offsets). */
function Snippet({ hit }: { hit: SearchHit }) {
  const parts: ReactNode[] = []
  let at = 0
  for (const [i, { start, end }] of (hit.highlights ?? []).entries()) {
    if (start < at || end > hit.snippet.length) continue
    parts.push(hit.snippet.slice(at, start), <mark key={i}>{hit.snippet.slice(start, end)}</mark>)
    at = end
  }
  parts.push(hit.snippet.slice(at))
  return (
    <span className="session-snippet" data-seq={hit.seq}>
      {parts}
    </span>
  )
}

const CLOCK_MS = 60_000

/** Re-renders every minute, so "5 min ago" stays true. */
function useClock(): void {
  const [, setTick] = useState(0)
  useEffect(() => {
    const timer = setInterval(() => setTick((tick) => tick + 1), CLOCK_MS)
    return () => clearInterval(timer)
  }, [])
}

/**
 * Ends this browser's sign-in (the host lists it as signed out and clears the cookie), then reloads: the host
 * answers the reload with its signed-out page, which says how to sign in again.
 */
async function signOut(): Promise<void> {
  await fetch('/auth/sign-out', { method: 'POST' }).catch(() => undefined)
  window.location.reload()
}

/** One session's row and, when opened, the rows of the subagent sessions it started. */
function SessionRow({
  node,
  activeId,
  snippets,
  isOpen,
  toggle,
}: {
  node: SessionNode
  activeId: string | undefined
  snippets: Map<string, SearchHit>
  isOpen: (node: SessionNode) => boolean
  toggle: (id: string, open: boolean) => void
}) {
  const { item, children } = node
  const open = children.length > 0 && isOpen(node)
  const href = hrefOf(item.id, snippets.get(item.id)?.seq)
  return (
    <li className={`session-item${item.subagentOf ? ' subagent-session' : ''}`} data-testid="session-row">
      <a
        href={href}
        className={`session-link${item.id === activeId ? ' active' : ''}`}
        data-session-id={item.id}
        onClick={(event) => {
          if (event.metaKey || event.ctrlKey || event.shiftKey) return
          event.preventDefault()
          navigate(href)
        }}
      >
        <span className="session-title">
          {item.parent && <GitBranch size={12} className="fork-mark" aria-label="forked" />}
          {item.subagentOf && <Bot size={12} className="fork-mark" aria-label="subagent" />}
          {labelOf(item)}
        </span>
        {snippets.has(item.id) && <Snippet hit={snippets.get(item.id)!} />}
        <span className="session-meta">
          {item.agent === 'running' && <Loader2 size={12} className="spin" aria-label="running" />}
          {item.pendingApprovals > 0 && (
            <span className="badge badge-warn" title="Waiting for your approval">
              <ShieldAlert size={11} /> {item.pendingApprovals}
            </span>
          )}
          {item.lockedElsewhere && <Lock size={11} aria-label="open in another dsh" />}
          {item.damaged && (
            <span className="badge badge-warn damaged" title={`Damaged, cannot be resumed: ${item.damaged}`}>
              damaged
            </span>
          )}
          {item.archived && <span className="badge archived">archived</span>}
          <span>{ago(item.updatedAt)}</span>
          <span className="dot">·</span>
          <span>{item.turns === 1 ? '1 turn' : `${item.turns} turns`}</span>
        </span>
      </a>
      <SessionActions item={item} active={item.id === activeId} />
      {children.length > 0 && (
        <button
          className="link-btn subagents-toggle"
          aria-expanded={open}
          data-testid="subagents-toggle"
          onClick={() => toggle(item.id, !open)}
        >
          {open ? <ChevronDown size={12} /> : <ChevronRight size={12} />}
          {children.length === 1 ? '1 subagent' : `${children.length} subagents`}
          {!open && children.some((child) => anyIn(child, (each) => each.agent === 'running')) && (
            <Loader2 size={11} className="spin" aria-label="a subagent is running" />
          )}
          {!open && children.some((child) => anyIn(child, (each) => each.pendingApprovals > 0)) && (
            <ShieldAlert size={11} className="tone-warn" aria-label="a subagent waits for your approval" />
          )}
        </button>
      )}
      {open && (
        <ul className="session-children" data-testid="session-children">
          {children.map((child) => (
            <SessionRow
              key={child.item.id}
              node={child}
              activeId={activeId}
              snippets={snippets}
              isOpen={isOpen}
              toggle={toggle}
            />
          ))}
        </ul>
      )}
    </li>
  )
}

export function Sidebar({ route }: { route: Route }) {
  useClock()
  useEmitter(sessions.changed)
  useEmitter(stream.changed)
  const [query, setQuery] = useState('')
  const [showArchived, setShowArchived] = useState(false)
  const archivedCount = sessions.items.filter((item) => item.archived).length
  const { hits, searching } = useTextSearch(query)
  const needle = query.trim().toLowerCase()
  const activeId = route.page === 'session' ? route.id : undefined

  const matched = useMemo(() => new Set(hits.map((hit) => hit.sessionId)), [hits])
  const matches = useMemo(
    () => (item: SessionListItem) => labelOf(item).toLowerCase().includes(needle) || matched.has(item.id),
    [needle, matched],
  )
  const groups = useMemo(() => {
    // Archived sessions (`session/archived`) are hidden until the toggle shows them; a subagent's child is a
    // row under its parent's, and a parent shows when it or any session under it matches the search.
    const shown = showArchived ? sessions.items : sessions.items.filter((item) => !item.archived)
    const roots = sessionTree(shown, sessions.items)
    return groupByWorkspace(needle ? roots.filter((node) => anyIn(node, matches)) : roots)
  }, [sessions.items, needle, matches, showArchived])
  // Children are folded under their parent until opened; the open session's parents are open, and so are
  // the parents of a search's matches.
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set())
  const activePath = useMemo(
    () =>
      activeId
        ? ancestorsOf(
            groups.flatMap((group) => group.nodes),
            activeId,
          )
        : [],
    [groups, activeId],
  )
  const isOpen = (node: SessionNode) =>
    opened.has(node.item.id) ||
    activePath.includes(node.item.id) ||
    (!!needle && node.children.some((child) => anyIn(child, matches)))
  const toggle = (id: string, open: boolean) =>
    setOpened((before) => {
      const next = new Set(before)
      if (open) next.add(id)
      else next.delete(id)
      return next
    })
  const snippets = new Map(hits.filter((hit) => hit.field === 'text').map((hit) => [hit.sessionId, hit]))

  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="brand">
        <span className="logo" aria-hidden>
          <svg viewBox="0 0 32 32" width="22" height="22">
            <rect width="32" height="32" rx="8" fill="currentColor" />
            <path
              d="M9 11l5 5-5 5"
              fill="none"
              stroke="var(--logo-ink)"
              strokeWidth="2.6"
              strokeLinecap="round"
              strokeLinejoin="round"
            />
            <path d="M16 21h7" stroke="var(--logo-ink)" strokeWidth="2.6" strokeLinecap="round" />
          </svg>
        </span>
        <span className="brand-name">dsh</span>
        <span
          className={`conn conn-${stream.state}`}
          title={
            stream.state === 'open'
              ? 'Connected'
              : stream.state === 'connecting'
                ? 'Connecting…'
                : stream.state === 'signed-out'
                  ? 'Signed out: open the link dsh web prints'
                  : 'Disconnected: retrying'
          }
        />
      </div>
      <button className="btn btn-primary new-session" onClick={() => navigate('/')}>
        <Plus size={16} /> New session
      </button>
      <label className="search">
        <Search size={15} />
        <input
          type="search"
          placeholder="Search sessions"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          aria-label="Search sessions"
        />
        {query && (
          <button className="icon-btn" onClick={() => setQuery('')} aria-label="Clear search">
            <X size={14} />
          </button>
        )}
      </label>
      {archivedCount > 0 && (
        <button
          className="btn archived-toggle"
          aria-pressed={showArchived}
          onClick={() => setShowArchived(!showArchived)}
        >
          {showArchived ? 'Hide archived' : `Show archived (${archivedCount})`}
        </button>
      )}
      <div className="session-groups">
        {!sessions.loaded && !sessions.error && <div className="muted pad">Loading sessions…</div>}
        {sessions.error && <div className="inline-error pad">{sessions.error}</div>}
        {sessions.loaded && !groups.length && (
          <div className="muted pad">
            {needle ? (searching ? 'Searching…' : 'No session matches.') : 'No sessions yet.'}
          </div>
        )}
        {groups.map((group) => (
          <section key={group.cwd} className="session-group">
            <h3 title={group.cwd}>
              <Folder size={13} /> {basename(group.cwd)} <span className="group-path">{shortPath(group.cwd)}</span>
            </h3>
            <ul>
              {group.nodes.map((node) => (
                <SessionRow
                  key={node.item.id}
                  node={node}
                  activeId={activeId}
                  snippets={snippets}
                  isOpen={isOpen}
                  toggle={toggle}
                />
              ))}
            </ul>
          </section>
        ))}
      </div>
      <div className="sidebar-foot">
        <a
          href="/usage"
          className={`foot-link${route.page === 'usage' ? ' active' : ''}`}
          onClick={(event) => {
            event.preventDefault()
            navigate('/usage')
          }}
        >
          <Coins size={15} /> Usage
        </a>
        <a
          href="/settings"
          className={`foot-link${route.page === 'settings' ? ' active' : ''}`}
          onClick={(event) => {
            event.preventDefault()
            navigate('/settings')
          }}
        >
          <Settings size={15} /> Settings
        </a>
        <button
          className="foot-link"
          title="Ends this browser's sign-in, in every dsh web on this DSH_HOME"
          onClick={() => void signOut()}
        >
          <LogOut size={15} /> Sign out
        </button>
      </div>
    </nav>
  )
}
