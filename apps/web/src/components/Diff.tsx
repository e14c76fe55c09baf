import { useMemo } from 'react'
import { structuredPatch } from 'diff'

const CONTEXT_LINES = 3

export interface DiffStats {
  added: number
  removed: number
}

export function diffOf(before: string, after: string) {
  const patch = structuredPatch('a', 'b', before.endsWith('\n') ? before : `${before}\n`, after.endsWith('\n') || !after ? after : `${after}\n`, '', '', { context: CONTEXT_LINES })
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

/** A unified diff of an edit (the tool's old and new text), with line numbers relative to the snippet. */
export function Diff({ before, after }: { before: string; after: string }) {
  const { hunks } = useMemo(() => diffOf(before, after), [before, after])
  return (
    <div className="diff" role="table" aria-label="Diff">
      {hunks.map((hunk, index) => {
        let oldLine = hunk.oldStart
        let newLine = hunk.newStart
        return (
          <div key={index} className="hunk">
            {hunks.length > 1 && <div className="hunk-head">@@ −{hunk.oldStart},{hunk.oldLines} +{hunk.newStart},{hunk.newLines} @@</div>}
            {hunk.lines
              .filter((line) => !line.startsWith('\\'))
              .map((line, at) => {
                const sign = line[0]
                const kind = sign === '+' ? 'add' : sign === '-' ? 'del' : 'ctx'
                const left = kind === 'add' ? '' : oldLine++
                const right = kind === 'del' ? '' : newLine++
                return (
                  <div key={at} className={`diff-line diff-${kind}`} role="row">
                    <span className="ln">{left}</span>
                    <span className="ln">{right}</span>
                    <span className="sign">{kind === 'ctx' ? ' ' : sign}</span>
                    <span className="code">{line.slice(1) || ' '}</span>
                  </div>
                )
              })}
          </div>
        )
      })}
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
