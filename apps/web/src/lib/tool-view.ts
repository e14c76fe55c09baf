// Pure helpers of the tool cards: what a result says about how a command ended, which part of long output
// to show first, and whether the output adds anything to the error shown above it.

/** The bracketed notes `bash` appends to its output, one per line, at the end (tool-bash's format). */
function trailingNotes(output: string): string[] {
  const notes: string[] = []
  const lines = output.split('\n')
  for (let at = lines.length - 1; at >= 0; at--) {
    const line = lines[at]!.trim()
    if (!/^\[.*\]$/.test(line)) break
    notes.unshift(line)
  }
  return notes
}

/** How a command ended when that was not a clean exit 0: `exit 3`, `killed by SIGTERM`, `timed out`. */
export function commandEnding(output: string | undefined): string | undefined {
  if (!output) return undefined
  for (const note of trailingNotes(output)) {
    const exit = /^\[Exit code (-?\d+)\]$/.exec(note)
    if (exit) return `exit ${exit[1]}`
    const killed = /^\[Killed by (\w+)\]$/.exec(note)
    if (killed) return `killed by ${killed[1]}`
    if (note.startsWith('[Timed out')) return 'timed out'
  }
  return undefined
}

/**
 * What a long output shows before "Show all": its first lines, or for a terminal its last lines (where a
 * command prints its summary, its failure and the notes on how it ended).
 */
export function preview(text: string, maxLines: number, from: 'head' | 'tail'): { text: string; hidden: number } {
  const lines = text.split('\n')
  if (lines.length <= maxLines) return { text, hidden: 0 }
  const kept = from === 'head' ? lines.slice(0, maxLines) : lines.slice(-maxLines)
  return { text: kept.join('\n'), hidden: lines.length - maxLines }
}

/** Whether a failed call's output says more than its error (tools often return the message as the text too). */
export function outputAddsToError(output: string | undefined, error: { message: string } | undefined): boolean {
  if (output === undefined) return false
  if (!error) return true
  const text = output.trim()
  return text !== '' && text !== error.message.trim()
}
