import { stripVTControlCharacters } from 'node:util'
import type { SavedText, SpilledText } from '@dsh/spill'

const lineCount = (text: string) => (text ? text.split('\n').length - (text.endsWith('\n') ? 1 : 0) : 0)
const n = (value: number) => value.toLocaleString('en')

interface PreviewOptions {
  headChars: number
  tailChars: number
  readHint: string
}

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

/** What a preview shows of a text: its two ends, where they sit in it, and what lies between. */
interface Ends {
  head: string
  tail: string
  bytes: number
  totalLines: number
  /** Lines the head and the tail hold, and whether whole lines lie between them. */
  headLines: number
  tailLines: number
  /** Between head and tail: characters (a text in memory) or bytes (a file read at its ends). */
  omitted: { count: number; unit: 'characters' | 'bytes' }
}

function render(ends: Ends, spilled: SpilledText | { failure: string }, options: PreviewOptions): string {
  const { head, tail, bytes, totalLines: total, headLines, tailLines } = ends
  const firstTail = total - tailLines + 1
  const where =
    'path' in spilled
      ? `The full output is saved at ${spilled.path}`
      : `The full output could not be saved (${spilled.failure})`
  // Whole lines left out are named by number; a cut inside one long line is counted in characters.
  const byLines = headLines + 1 <= firstTail - 1
  const shown = !tail
    ? `lines 1–${n(headLines)}`
    : byLines
      ? `lines 1–${n(headLines)} and ${n(firstTail)}–${n(total)}`
      : `the first ${n(head.length)} and the last ${n(tail.length)} characters`
  const hint = 'path' in spilled ? ` ${options.readHint}` : ''
  const note = `[Output too large for the conversation: ${n(bytes)} bytes, ${n(total)} line${total === 1 ? '' : 's'}. ${where}; shown here: ${shown}.${hint}]`
  const gap = byLines
    ? `[… lines ${n(headLines + 1)}–${n(tail ? firstTail - 1 : total)} omitted …]`
    : `[… ${n(ends.omitted.count)} ${ends.omitted.unit} omitted …]`
  return [note, head.endsWith('\n') ? head.slice(0, -1) : head, gap, tail].filter((part) => part !== '').join('\n')
}

/**
 * The text the model sees instead of a spilled output: a note with the size, the path and the lines shown,
 * the head, a marker of the omitted lines, and the tail.
 */
export function preview(
  text: string,
  bytes: number,
  spilled: SpilledText | { failure: string },
  options: PreviewOptions,
): string {
  const head = headOf(text, options.headChars)
  const tail = tailOf(text.slice(head.length), options.tailChars)
  const omitted = { count: text.length - head.length - tail.length, unit: 'characters' as const }
  return render(
    { head, tail, bytes, totalLines: lineCount(text), headLines: lineCount(head), tailLines: lineCount(tail), omitted },
    spilled,
    options,
  )
}

/**
 * The same preview of an output its producer saved whole (read at its two ends, `saved.head` / `saved.tail`
 * being `headChars` / `tailChars` bytes): line numbers and sizes are the file's, so `read` with an offset
 * reaches the lines the note names. Terminal control sequences in the raw bytes are not shown.
 */
export function previewSaved(saved: SavedText, options: PreviewOptions): string {
  const plain = (text: string) => stripVTControlCharacters(text.replace(/\r\n/g, '\n'))
  const whole = saved.omittedBytes === 0
  const head = whole ? saved.head : atLineEnd(saved.head)
  const tail = whole ? saved.tail : atLineStart(saved.tail)
  const omitted = { count: saved.bytes - Buffer.byteLength(head) - Buffer.byteLength(tail), unit: 'bytes' as const }
  return render(
    {
      head: plain(head),
      tail: plain(tail),
      bytes: saved.bytes,
      totalLines: saved.lines,
      headLines: lineCount(head),
      tailLines: lineCount(tail),
      omitted,
    },
    saved,
    options,
  )
}

/** A head read by bytes, ending after its last newline when one lies in its second half. */
function atLineEnd(text: string): string {
  const end = text.lastIndexOf('\n')
  return end >= text.length / 2 ? text.slice(0, end + 1) : text
}

/** A tail read by bytes, starting after its first newline when one lies in its first half. */
function atLineStart(text: string): string {
  const start = text.indexOf('\n')
  return start !== -1 && start < text.length / 2 ? text.slice(start + 1) : text
}
