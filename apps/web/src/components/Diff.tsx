import { useMemo, useState } from 'react'
import { structuredPatch } from 'diff'

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

/**
 * A unified diff of an edit (the tool's old and new text). `numbered`: the texts are whole files, so the
 * line numbers are the file's; an edit's snippet does not say where in the file it sits, so it has none.
 * `muted`: a change that did not happen (refused, or cut), drawn without the colours of an applied one.
 */
export function Diff({ before, after, numbered = true, muted = false }: { before: string; after: string; numbered?: boolean; muted?: boolean }) {
  const { hunks } = useMemo(() => diffOf(before, after), [before, after])
  const [all, setAll] = useState(false)
  const total = hunks.reduce((sum, hunk) => sum + hunk.lines.filter((line) => !line.startsWith('\\')).length, 0)
  let budget = all ? Infinity : PREVIEW_LINES
  return (
    <div className={`diff${numbered ? '' : ' diff-plain'}${muted ? ' diff-muted' : ''}`} role="table" aria-label={muted ? 'Proposed diff, not applied' : 'Diff'}>
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
            {shown.map((line, at) => {
              const sign = line[0]
              const kind = sign === '+' ? 'add' : sign === '-' ? 'del' : 'ctx'
              const left = kind === 'add' ? '' : oldLine++
              const right = kind === 'del' ? '' : newLine++
              return (
                <div key={at} className={`diff-line diff-${kind}`} role="row">
                  {numbered && <span className="ln">{left}</span>}
                  {numbered && <span className="ln">{right}</span>}
                  <span className="sign">{kind === 'ctx' ? ' ' : sign}</span>
                  <span className="code">{line.slice(1) || ' '}</span>
                </div>
              )
            })}
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
