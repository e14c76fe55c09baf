// Lines of text as the file tools (tool-fs, tool-str-replace-editor) read and show them, so both agree.

/** The lines of a text (line ends dropped; a final line end does not start another line). */
export function splitLines(text: string): string[] {
  if (!text) return []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
}

/** `cat -n` style: the line number right-aligned, a tab, the line (cut past `maxChars` with a note). */
export function numbered(lines: string[], firstLine: number, maxChars: number): string {
  return lines
    .map((line, index) => {
      const shown =
        line.length > maxChars
          ? `${line.slice(0, maxChars)} … [line cut: ${line.length - maxChars} more characters]`
          : line
      return `${String(firstLine + index).padStart(6)}\t${shown}`
    })
    .join('\n')
}

/** The 1-based line on which character `index` of `text` lies. */
export function lineAt(text: string, index: number): number {
  let line = 1
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line++
  return line
}
