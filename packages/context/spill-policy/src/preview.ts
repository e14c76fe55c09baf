import type { SpilledText } from '@dsh/spill'

const lineCount = (text: string) => (text ? text.split('\n').length - (text.endsWith('\n') ? 1 : 0) : 0)
const n = (value: number) => value.toLocaleString('en')

/** The first `chars` characters, ending at a line end when one lies in the second half of the cut. */
function headOf(text: string, chars: number): string {
  if (text.length <= chars) return text
  const end = text.lastIndexOf('\n', chars - 1)
  return end >= chars / 2 ? text.slice(0, end + 1) : text.slice(0, chars)
}

/** The last `chars` characters, starting after a line end when one lies in the first half of the cut. */
function tailOf(text: string, chars: number): string {
  if (!chars) return ''
  if (text.length <= chars) return text
  const from = text.length - chars
  const start = text.indexOf('\n', from)
  return start !== -1 && start < from + chars / 2 ? text.slice(start + 1) : text.slice(from)
}

/**
 * The text the model sees instead of a spilled output: a note with the size, the path and the lines shown,
 * the head, a marker of the omitted lines, and the tail.
 */
export function preview(text: string, bytes: number, spilled: SpilledText | { failure: string }, options: { headChars: number; tailChars: number; readHint: string }): string {
  const total = lineCount(text)
  const head = headOf(text, options.headChars)
  const tail = tailOf(text.slice(head.length), options.tailChars)
  const headLines = lineCount(head)
  const tailLines = lineCount(tail)
  const firstTail = total - tailLines + 1
  const where = 'path' in spilled ? `The full output is saved at ${spilled.path}` : `The full output could not be saved (${spilled.failure})`
  // Whole lines left out are named by number; a cut inside one long line is counted in characters.
  const byLines = headLines + 1 <= firstTail - 1
  const omitted = text.length - head.length - tail.length
  const shown = !tail ? `lines 1–${n(headLines)}` : byLines ? `lines 1–${n(headLines)} and ${n(firstTail)}–${n(total)}` : `the first ${n(head.length)} and the last ${n(tail.length)} characters`
  const hint = 'path' in spilled ? ` ${options.readHint}` : ''
  const note = `[Output too large for the conversation: ${n(bytes)} bytes, ${n(total)} line${total === 1 ? '' : 's'}. ${where}; shown here: ${shown}.${hint}]`
  const gap = byLines ? `[… lines ${n(headLines + 1)}–${n(tail ? firstTail - 1 : total)} omitted …]` : `[… ${n(omitted)} characters omitted …]`
  return [note, head.endsWith('\n') ? head.slice(0, -1) : head, gap, tail].filter((part) => part !== '').join('\n')
}
