import { createContext, useContext, useState, type ReactNode } from 'react'
import { ChevronDown, ChevronRight, Layers, Loader2, ShieldAlert, AlertTriangle } from 'lucide-react'
import type { Row } from '../lib/runs.ts'
import { runState, runSummary } from '../lib/runs.ts'

type Run = Extract<Row, { kind: 'run' }>

/**
 * The transcript's "Expand all" / "Collapse all": `gen` counts the clicks, so every card and run open
 * or close once per click and the reader's own clicks win afterwards. Gen 0: nothing was clicked yet.
 */
export interface Expansion {
  open: boolean
  gen: number
}
export const ExpansionContext = createContext<Expansion>({ open: false, gen: 0 })

/**
 * Whether a row is open: `fallback()` until "Expand all" / "Collapse all" is clicked, then what was clicked
 * (a row that needs the reader, `keepOpen()`, stays open on "Collapse all"), until the reader toggles this row
 * itself. A row drawn after the click (a run just opened, a new call) opens on "Expand all" and otherwise
 * starts as it would have.
 */
export function useExpanded(fallback: () => boolean, keepOpen: () => boolean): [boolean, (open: boolean) => void] {
  const all = useContext(ExpansionContext)
  const [born] = useState(all.gen)
  const [own, setOwn] = useState<{ open: boolean; gen: number }>()
  const open =
    own && own.gen === all.gen
      ? own.open
      : all.gen === 0
        ? fallback()
        : all.open || (all.gen === born ? fallback() : keepOpen())
  return [open, (next) => setOwn({ open: next, gen: all.gen })]
}

/**
 * Consecutive calls folded into one row ("Ran 37 commands"), closed until opened. The calls that need the
 * reader (running, waiting for an answer, failed) are drawn below the row while it is closed: nothing a user
 * must see is ever hidden in it.
 */
export function RunGroup({
  run,
  render,
  revealed = false,
}: {
  run: Run
  render: (item: Run['items'][number]) => ReactNode
  /** It holds the event the page was opened at (a search hit): open until the reader closes it. */
  revealed?: boolean
}) {
  const [open, setOpen] = useExpanded(
    () => revealed,
    () => false,
  )
  const { running, queued, waiting, failed } = runState(run.calls)
  return (
    <div className={`run-group${open ? ' open' : ''}`} data-testid="run-group" data-run-key={run.key}>
      <button className="run-head" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? <ChevronDown size={14} className="muted" /> : <ChevronRight size={14} className="muted" />}
        <Layers size={14} className="muted" />
        <span className="run-summary" data-testid="run-summary">
          {runSummary(run.calls)}
        </span>
        {running > 0 && (
          <span className="muted small">
            <Loader2 size={12} className="spin" /> {running} running
          </span>
        )}
        {queued > 0 && <span className="muted small">{queued} queued</span>}
        {waiting > 0 && (
          <span className="badge badge-warn">
            <ShieldAlert size={11} /> {waiting} waiting for you
          </span>
        )}
        {failed > 0 && (
          <span className="badge badge-error">
            <AlertTriangle size={11} /> {failed} failed
          </span>
        )}
      </button>
      <div className="run-body">{(open ? run.items : run.pinned).map(render)}</div>
    </div>
  )
}
