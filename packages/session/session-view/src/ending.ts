// How a command ended, read from the notes the `bash` tools append to their output (one bracketed line each,
// at the end: tool-bash's and tool-bash-persistent's format).

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
