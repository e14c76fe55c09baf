// Pure helpers of the tool cards: which part of long output to show first, and whether the output adds
// anything to the error shown above it.

/** How a command ended (`exit 3`): read once, by the display fold every surface shares. */
export { commandEnding } from '@dsh/session-view'

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

/**
 * Whether what a call printed while it ran is worth showing beside its result. A cancelled command's result is
 * its printed output with a note on how it was cut, so it is shown once, as the result; a result that does not
 * hold it (a crash's repair, a tool whose result is only the error) leaves it to be shown on its own.
 */
export function printedAddsToResult(printed: string, output: string | undefined): boolean {
  if (output === undefined) return true
  const text = printed.trim()
  return text !== '' && !output.includes(text)
}
