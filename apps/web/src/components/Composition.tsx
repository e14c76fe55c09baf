import { useEffect, useState } from 'react'
import { Boxes, ChevronDown, ChevronRight, Layers } from 'lucide-react'
import type { CompositionRow } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import { CopyButton } from './Markdown.tsx'

/** `bundle @dsh/bundle-base:12 (insert, name)` → the layer and the keys it set. */
function splitTouch(touch: string): { layer: string; keys?: string } {
  const match = /^(.*?)\s*\(([^)]*)\)$/.exec(touch)
  return match ? { layer: match[1]!, keys: match[2] } : { layer: touch }
}

function yamlish(value: unknown, indent = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value))
    return value.length
      ? value.map((entry) => `\n${indent}- ${yamlish(entry, `${indent}  `).trimStart()}`).join('')
      : '[]'
  const entries = Object.entries(value as Record<string, unknown>)
  if ('js' in (value as object) && entries.length === 1) return `!!js ${JSON.stringify((value as { js: string }).js)}`
  return entries.length
    ? entries.map(([key, entry]) => `\n${indent}${key}: ${yamlish(entry, `${indent}  `)}`).join('')
    : '{}'
}

function Row({ row, depth = 0 }: { row: CompositionRow; depth?: number }) {
  const [open, setOpen] = useState(false)
  const hasConfig =
    row.config !== undefined && !(typeof row.config === 'object' && row.config && !Object.keys(row.config).length)
  const fromUser = row.setBy.some((touch) => !touch.startsWith('bundle '))
  return (
    <li
      className={`comp-row${row.disabled ? ' disabled' : ''}${fromUser ? ' from-user' : ''}`}
      style={{ marginLeft: depth * 18 }}
      data-row-id={row.id}
    >
      <div className="comp-head">
        <button
          className="icon-btn"
          onClick={() => setOpen(!open)}
          disabled={!hasConfig && !row.children}
          aria-label={open ? 'Collapse' : 'Expand'}
        >
          {hasConfig || row.children ? (
            open ? (
              <ChevronDown size={14} />
            ) : (
              <ChevronRight size={14} />
            )
          ) : (
            <span style={{ width: 14 }} />
          )}
        </button>
        <code className="comp-id">{row.id}</code>
        <span className="comp-name">{row.children ? 'group' : row.name}</span>
        {row.disabled !== undefined && (
          <span className="badge badge-warn">
            disabled: {String(typeof row.disabled === 'object' ? yamlish(row.disabled) : row.disabled)}
          </span>
        )}
        <span className="comp-layers">
          {row.setBy.map((touch) => {
            const { layer, keys } = splitTouch(touch)
            return (
              <span key={touch} className={`layer-chip${touch.startsWith('bundle ') ? '' : ' user'}`} title={touch}>
                <Layers size={11} /> {layer.replace(/^bundle /, '')}
                {keys && <span className="muted"> · {keys}</span>}
              </span>
            )
          })}
        </span>
      </div>
      {open && hasConfig && <pre className="comp-config">{`config:${yamlish(row.config, '  ')}`}</pre>}
      {open && row.children && (
        <ul className="comp-rows">
          {row.children.map((child) => (
            <Row key={child.id} row={child} depth={depth + 1} />
          ))}
        </ul>
      )}
    </li>
  )
}

/** The booted plugin tree: each row, its plugin, its config and the layers that set it. */
export function Composition() {
  const [data, setData] = useState<{ text: string; header: string[]; rows: CompositionRow[] }>()
  const [error, setError] = useState<string>()
  const [raw, setRaw] = useState(false)
  useEffect(() => {
    call('composition.get', {}).then(setData, (failure) => setError(messageOf(failure)))
  }, [])
  if (error) return <p className="inline-error">{error}</p>
  if (!data) return <p className="muted">Loading…</p>
  return (
    <section className="card composition" data-testid="composition">
      <div className="comp-top">
        <h3>
          <Boxes size={16} /> The plugin tree of this launch
        </h3>
        <label className="toggle">
          <input type="checkbox" checked={raw} onChange={(event) => setRaw(event.target.checked)} /> YAML (as{' '}
          <code>dsh --dump-config</code>)
        </label>
      </div>
      <ul className="comp-header">
        {data.header.map((line) => (
          <li key={line} className="mono small">
            {line}
          </li>
        ))}
      </ul>
      {raw ? (
        <div className="output-wrap">
          <CopyButton text={data.text} />
          <pre className="comp-raw">{data.text}</pre>
        </div>
      ) : (
        <ul className="comp-rows">
          {data.rows.map((row) => (
            <Row key={row.id} row={row} />
          ))}
        </ul>
      )}
    </section>
  )
}
