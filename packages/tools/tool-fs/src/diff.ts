import { lineAt, splitLines } from '@dsh/tool-kit'

const cut = (line: string, max: number) =>
  line.length > max ? `${line.slice(0, max)} … [line cut: ${line.length - max} more characters]` : line

/** One diff line: a marker (' ', '-', '+'), the line number in its version, a tab, the text. */
const row = (marker: string, number: number, text: string, max: number) =>
  `${marker}${String(number).padStart(5)}\t${cut(text, max)}`

export interface DiffOptions {
  contextLines: number
  maxLines: number
  maxLineChars: number
}

/**
 * A compact diff of one replacement: `old` at offset `at` of `before` became `inserted` in `after`. The
 * changed lines are shown as removed (`-`, old numbers) and added (`+`, new numbers), lines the two share at
 * either end as context, and `contextLines` around them; at most `maxLines`, with a note of the rest.
 */
export function replacementDiff(
  before: string,
  after: string,
  at: number,
  old: string,
  inserted: string,
  options: DiffOptions,
): string {
  const oldLines = splitLines(before)
  const newLines = splitLines(after)
  const first = lineAt(before, at)
  let oldEnd = lineAt(before, at + Math.max(0, old.length - 1))
  // Whole lines deleted leave no new line behind; otherwise the change ends on the line its last character is on.
  const wholeLines = old.endsWith('\n') && (at === 0 || before[at - 1] === '\n')
  let newEnd = inserted ? lineAt(after, at + inserted.length - 1) : wholeLines ? first - 1 : lineAt(after, at)
  let start = first
  // Lines the replacement left as they were (the model often repeats them in old_string) are context.
  while (start <= oldEnd && start <= newEnd && oldLines[start - 1] === newLines[start - 1]) start++
  while (oldEnd >= start && newEnd >= start && oldLines[oldEnd - 1] === newLines[newEnd - 1]) {
    oldEnd--
    newEnd--
  }
  const out: string[] = []
  for (let line = Math.max(1, start - options.contextLines); line < start; line++)
    out.push(row(' ', line, newLines[line - 1]!, options.maxLineChars))
  for (let line = start; line <= oldEnd; line++) out.push(row('-', line, oldLines[line - 1]!, options.maxLineChars))
  for (let line = start; line <= newEnd; line++) out.push(row('+', line, newLines[line - 1]!, options.maxLineChars))
  const afterChange = Math.max(newEnd, start - 1) + 1 // the first new line past the change
  for (let line = afterChange; line < afterChange + options.contextLines && line <= newLines.length; line++)
    out.push(row(' ', line, newLines[line - 1]!, options.maxLineChars))
  if (out.length <= options.maxLines) return out.join('\n')
  return [
    ...out.slice(0, options.maxLines),
    `[… ${out.length - options.maxLines} more lines of the diff not shown: read the file to see them]`,
  ].join('\n')
}
