import { useMemo, useState } from 'react'
import { structuredPatch } from 'diff'
import { Emitter, useEmitter } from '../lib/emitter.ts'

const CONTEXT_LINES = 3
/** Lines a diff shows before "Show all" (a whole new file would otherwise fill the conversation). */
const PREVIEW_LINES = 40

export interface DiffStats {
  added: number
  removed: number
}

export function diffOf(before: string, after: string) {
  // Both sides end with a newline so a last line without one is not shown as changed; an empty side stays
  // empty (a new file removes nothing).
  const closed = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`)
  const patch = structuredPatch('a', 'b', closed(before), closed(after), '', '', { context: CONTEXT_LINES })
  let added = 0
  let removed = 0
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++
      else if (line.startsWith('-')) removed++
    }
  }
  return { hunks: patch.hunks, stats: { added, removed } }
}

export type DiffLayout = 'unified' | 'split'
const LAYOUT_KEY = 'dsh.diffLayout'
const layoutChanged = new Emitter()
const currentLayout = (): DiffLayout => (localStorage.getItem(LAYOUT_KEY) === 'split' ? 'split' : 'unified')

/** Every numbered diff of the page follows one choice, kept in this browser. */
export function useDiffLayout(): [DiffLayout, (layout: DiffLayout) => void] {
  useEmitter(layoutChanged)
  return [
    currentLayout(),
    (layout) => {
      localStorage.setItem(LAYOUT_KEY, layout)
      layoutChanged.emit()
    },
  ]
}

interface Row {
  kind: 'add' | 'del' | 'ctx'
  old?: number
  new?: number
  text: string
}

/** One side-by-side row: the old line (context or removed) beside the new one (context or added). */
interface SplitRow {
  left?: Row
  right?: Row
}

/** Runs of removed then added lines sit side by side, pair by pair; context is on both sides. */
function splitRows(rows: Row[]): SplitRow[] {
  const out: SplitRow[] = []
  for (let at = 0; at < rows.length;) {
    const row = rows[at]!
    if (row.kind === 'ctx') {
      out.push({ left: row, right: row })
      at++
      continue
    }
    const removed: Row[] = []
    const added: Row[] = []
    while (at < rows.length && rows[at]!.kind === 'del') removed.push(rows[at++]!)
    while (at < rows.length && rows[at]!.kind === 'add') added.push(rows[at++]!)
    for (let pair = 0; pair < Math.max(removed.length, added.length); pair++)
      out.push({ left: removed[pair], right: added[pair] })
  }
  return out
}

/**
 * A unified diff of an edit (the tool's old and new text). `numbered`: the texts are whole files, so the
 * line numbers are the file's; an edit's snippet does not say where in the file it sits, so it has none.
 * `muted`: a change that did not happen (refused, or cut), drawn without the colours of an applied one.
 * A numbered diff can be shown side by side (`split`, the choice shared by every diff of the page).
 */
export function Diff({
  before,
  after,
  numbered = true,
  muted = false,
}: {
  before: string
  after: string
  numbered?: boolean
  muted?: boolean
}) {
  const { hunks } = useMemo(() => diffOf(before, after), [before, after])
  const [all, setAll] = useState(false)
  const [layout, setLayout] = useDiffLayout()
  const split = numbered && layout === 'split'
  const total = hunks.reduce((sum, hunk) => sum + hunk.lines.filter((line) => !line.startsWith('\\')).length, 0)
  let budget = all ? Infinity : PREVIEW_LINES
  return (
    <div
      className={`diff${numbered ? '' : ' diff-plain'}${muted ? ' diff-muted' : ''}${split ? ' diff-split' : ''}`}
      role="table"
      aria-label={muted ? 'Proposed diff, not applied' : 'Diff'}
      data-layout={split ? 'split' : 'unified'}
    >
      {numbered && (
        <div className="diff-toolbar">
          <button
            className="link-btn"
            onClick={() => setLayout(split ? 'unified' : 'split')}
            aria-pressed={split}
            data-testid="diff-layout"
          >
            {split ? 'Unified' : 'Split'}
          </button>
        </div>
      )}
      {hunks.map((hunk, index) => {
        if (budget <= 0) return null
        let oldLine = hunk.oldStart
        let newLine = hunk.newStart
        const lines = hunk.lines.filter((line) => !line.startsWith('\\'))
        const shown = lines.slice(0, budget)
        budget -= shown.length
        return (
          <div key={index} className="hunk">
            {hunks.length > 1 && numbered && (
              <div className="hunk-head">
                @@ −{hunk.oldStart},{hunk.oldLines} +{hunk.newStart},{hunk.newLines} @@
              </div>
            )}
            {(() => {
              const rows: Row[] = shown.map((line) => {
                const kind = line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : 'ctx'
                return {
                  kind,
                  text: line.slice(1),
                  ...(kind === 'add' ? {} : { old: oldLine++ }),
                  ...(kind === 'del' ? {} : { new: newLine++ }),
                }
              })
              if (split)
                return splitRows(rows).map((row, at) => (
                  <div key={at} className="diff-split-row" role="row">
                    <SplitSide row={row.left} line={row.left?.old} />
                    <SplitSide row={row.right} line={row.right?.new} />
                  </div>
                ))
              return rows.map((row, at) => (
                <div key={at} className={`diff-line diff-${row.kind}`} role="row">
                  {numbered && <span className="ln">{row.old ?? ''}</span>}
                  {numbered && <span className="ln">{row.new ?? ''}</span>}
                  <span className="sign">{row.kind === 'ctx' ? ' ' : row.kind === 'add' ? '+' : '-'}</span>
                  <span className="code">{row.text || ' '}</span>
                </div>
              ))
            })()}
          </div>
        )
      })}
      {total > PREVIEW_LINES && (
        <button className="link-btn diff-more" onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all ${total} lines`}
        </button>
      )}
    </div>
  )
}

export function DiffStat({ stats }: { stats: DiffStats }) {
  return (
    <span className="diffstat">
      <span className="add">+{stats.added}</span> <span className="del">−{stats.removed}</span>
    </span>
  )
}

function SplitSide({ row, line }: { row?: Row; line?: number }) {
  if (!row) return <div className="diff-line diff-empty" role="cell" />
  return (
    <div className={`diff-line diff-${row.kind}`} role="cell">
      <span className="ln">{line}</span>
      <span className="sign">{row.kind === 'ctx' ? ' ' : row.kind === 'add' ? '+' : '-'}</span>
      <span className="code">{row.text || ' '}</span>
    </div>
  )
}
