import { useEffect, useRef, useState } from 'react'
import { ChevronRight, CornerLeftUp, Folder, GitBranch, History, Home } from 'lucide-react'
import type { DirectoryEntry } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import { useEscapeCloses } from '../lib/keys.ts'

interface Listing {
  path: string
  root: string
  home: string
  roots: string[]
  parent?: string
  entries: DirectoryEntry[]
}

/**
 * Browses folders on the machine dsh runs on and picks one. The host decides what may be opened (the home,
 * the launch folder, `--allow-root` folders; symlinks resolved) and names a refusal; the page only shows it.
 */
export function FolderPicker({
  start,
  recent = [],
  onPick,
  onCancel,
}: {
  start?: string
  /** Workspaces of recent sessions, newest first: one click opens one (the host still decides). */
  recent?: string[]
  onPick: (path: string) => void
  onCancel: () => void
}) {
  useEscapeCloses(true, onCancel)
  const [listing, setListing] = useState<Listing>()
  const [error, setError] = useState<string>()
  const [typed, setTyped] = useState('')
  const [completions, setCompletions] = useState<string[]>([])
  // Only the newest request may change the listing: the first listing can answer after a path the user typed
  // and submitted, and must not replace it. An answer also leaves alone a path the user is still typing.
  const latest = useRef(0)
  const editedSince = useRef(false)
  const open = (path?: string) => {
    const request = ++latest.current
    editedSince.current = false
    call('files.list', path ? { path } : {}).then(
      (result) => {
        if (request !== latest.current) return
        setListing(result)
        if (!editedSince.current) setTyped(result.path)
        setError(undefined)
      },
      (failure) => {
        if (request !== latest.current) return
        // The refused folder is not the one shown: the old listing goes, so "Use this folder" cannot take it.
        setListing(undefined)
        setError(messageOf(failure))
      },
    )
  }
  useEffect(() => open(start), [start])
  // Completion: the folders of the typed path's parent whose names start with its last part.
  useEffect(() => {
    const cut = typed.lastIndexOf('/')
    if (cut < 0 || typed === listing?.path) {
      setCompletions([])
      return
    }
    const parent = typed.slice(0, cut) || '/'
    const prefix = typed.slice(cut + 1)
    let current = true
    call('files.list', { path: parent }).then(
      (result) =>
        current &&
        setCompletions(result.entries.filter((entry) => entry.name.startsWith(prefix)).map((entry) => entry.path)),
      () => current && setCompletions([]),
    )
    return () => {
      current = false
    }
  }, [typed, listing?.path])

  const crumbs = listing ? crumbsOf(listing.root, listing.path) : []
  return (
    <div className="picker" role="dialog" aria-label="Choose a workspace folder">
      <div className="picker-bar">
        <button className="icon-btn" onClick={() => open('~')} title="Home" aria-label="Home folder">
          <Home size={15} />
        </button>
        <button
          className="icon-btn"
          disabled={!listing?.parent}
          onClick={() => listing?.parent && open(listing.parent)}
          title="Up"
          aria-label="Parent folder"
        >
          <CornerLeftUp size={15} />
        </button>
        <div className="crumbs">
          {crumbs.map((crumb, index) => (
            <span key={crumb.path}>
              {index > 0 && <ChevronRight size={12} className="muted" />}
              <button className="crumb" onClick={() => open(crumb.path)}>
                {crumb.name}
              </button>
            </span>
          ))}
        </div>
      </div>
      <form
        className="picker-path"
        onSubmit={(event) => {
          event.preventDefault()
          if (typed.trim()) open(typed.trim())
        }}
      >
        <input
          className="mono"
          data-esc="pass"
          aria-label="Folder path"
          list="picker-completions"
          value={typed}
          spellCheck={false}
          autoComplete="off"
          placeholder="/path/to/folder or ~/folder"
          onChange={(event) => {
            editedSince.current = true
            setTyped(event.target.value)
          }}
        />
        <datalist id="picker-completions">
          {completions.map((path) => (
            <option key={path} value={path} />
          ))}
        </datalist>
        <button className="btn" type="submit">
          Go
        </button>
      </form>
      {recent.length > 0 && (
        <div className="picker-recent" aria-label="Recent workspaces">
          <History size={13} className="muted" />
          <span className="muted">Recent</span>
          {recent.map((path) => (
            <button key={path} className="crumb mono" title={path} onClick={() => open(path)}>
              {path}
            </button>
          ))}
        </div>
      )}
      {error && (
        <div className="inline-error" role="alert">
          {error}
        </div>
      )}
      <ul className="picker-list">
        {listing?.entries.length === 0 && <li className="muted pad">No folders here.</li>}
        {listing?.entries.map((entry) => (
          <li key={entry.path}>
            <button className="picker-entry" onClick={() => open(entry.path)} onDoubleClick={() => onPick(entry.path)}>
              <Folder size={15} /> {entry.name}
              {entry.git && (
                <span className="picker-git muted" title="A git repository">
                  <GitBranch size={12} /> git
                </span>
              )}
            </button>
          </li>
        ))}
      </ul>
      {listing && listing.path === listing.home && (
        <div className="inline-warning picker-home-warning" role="status">
          This is your home folder. The model may change any file in it except secret and protected ones (shell startup
          files, git config, ~/.local/bin, editor and tool config; see docs/security.md). Pick a project folder unless
          you mean it.
        </div>
      )}
      <div className="picker-actions">
        <span className="muted mono picker-current">{listing?.path}</span>
        <button className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button className="btn btn-primary" disabled={!listing} onClick={() => listing && onPick(listing.path)}>
          Use this folder
        </button>
      </div>
    </div>
  )
}

function crumbsOf(root: string, path: string): { name: string; path: string }[] {
  const out = [{ name: root.split('/').filter(Boolean).at(-1) ?? '/', path: root }]
  const rest = path.slice(root.length).split('/').filter(Boolean)
  let current = root
  for (const part of rest) {
    current = `${current.replace(/\/$/, '')}/${part}`
    out.push({ name: part, path: current })
  }
  return out
}
