// The wire protocol of a persistent bash on a terminal. Commands are typed as printable ASCII lines (so no
// byte is taken for a terminal control key), and every command ends with a marker line carrying its
// sequence number, status and working directory, which is how the end of its output is found.

/**
 * A canonical-mode terminal drops the bytes of a line beyond 4095 (the kernel's N_TTY_BUF_SIZE), so long
 * commands are typed as several assignments of at most this many characters. A protocol constant, not a
 * tunable.
 */
const LINE_BUDGET = 1024

/** `text` as the inside of a bash `$'…'` string, one piece per character (pieces are never split). */
function quotePieces(text: string): string[] {
  const pieces: string[] = []
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (char === '\\' || char === "'") pieces.push('\\' + char)
    else if (code >= 0x20 && code < 0x7f) pieces.push(char)
    else if (code !== 0)
      pieces.push([...Buffer.from(char)].map((byte) => '\\x' + byte.toString(16).padStart(2, '0')).join(''))
    // NUL cannot be part of a bash string; it is dropped.
  }
  return pieces
}

/** The bash line that prints the marker of command `seq` (status first: `$?` is still the command's). */
export const markerLine = (nonce: string, seq: number) =>
  `printf '\\n%s:%d:%d:%s:%s\\n' ${nonce} ${seq} "$?" "$PWD" ${nonce}`

/** The lines that make bash run `command` in the session's own shell (so `cd` and `export` persist). */
export function commandLines(command: string, nonce: string, seq: number): string[] {
  const lines: string[] = []
  let chunk = ''
  for (const piece of quotePieces(command)) {
    if (chunk.length + piece.length > LINE_BUDGET) {
      lines.push(`__dsh_cmd${lines.length ? '+' : ''}=$'${chunk}'`)
      chunk = ''
    }
    chunk += piece
  }
  lines.push(`__dsh_cmd${lines.length ? '+' : ''}=$'${chunk}'`)
  lines.push(`eval "$__dsh_cmd"; ${markerLine(nonce, seq)}`)
  return lines
}

export interface Marker {
  seq: number
  status: number
  cwd: string
  /** Where the marker (with the newline printed before it) starts and where it ends in the text. */
  start: number
  end: number
}

/** Finds the first complete marker in terminal text (CRLF or LF line ends). */
export function findMarker(text: string, nonce: string): Marker | undefined {
  const match = new RegExp(`(?:\\r?\\n)?${nonce}:(\\d+):(\\d+):([\\s\\S]*?):${nonce}\\r?\\n`).exec(text)
  if (!match) return undefined
  return {
    seq: Number(match[1]),
    status: Number(match[2]),
    cwd: match[3]!,
    start: match.index,
    end: match.index + match[0].length,
  }
}

/**
 * How much of the end of `text` must be kept back because a marker may be starting there: from a nonce
 * already in it, else only an end that could be the start of `\r\n<nonce>` (so output is handed on at once,
 * for live display, unless it could be the marker's beginning).
 */
export function undecidedTail(text: string, nonce: string): number {
  const started = text.indexOf(nonce)
  if (started >= 0) return text.length - Math.max(0, started - 2)
  for (let keep = Math.min(text.length, nonce.length + 2); keep > 0; keep--) {
    const tail = text.slice(text.length - keep)
    if (`\r\n${nonce}`.startsWith(tail) || `\n${nonce}`.startsWith(tail) || nonce.startsWith(tail)) return keep
  }
  return 0
}
