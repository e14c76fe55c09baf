import { stripVTControlCharacters } from 'node:util'

// Command output the model reads: what a terminal would finally show, not the bytes that drew it. Colours
// (`ls --color`, git, test runners) and cursor moves are escape sequences the model would pay tokens for and
// might misread; a progress bar redraws one line with carriage returns, and only its last state is news.

/**
 * `raw` as plain text: CRLF line ends become LF; a line redrawn with `\r` keeps only its last non-empty
 * state (what stays on screen when each redraw rewrites the whole line, as progress bars do); then every
 * ANSI/VT control sequence is removed (`util.stripVTControlCharacters`), so no ESC byte remains.
 */
export function terminalText(raw: string): string {
  const lines = raw.replace(/\r\n/g, '\n').split('\n')
  const lastStates = lines.map((line) => {
    if (!line.includes('\r')) return line
    const states = line.split('\r').filter((state) => stripVTControlCharacters(state) !== '')
    return states.at(-1) ?? ''
  })
  return stripVTControlCharacters(lastStates.join('\n')).replaceAll('\x1b', '') // a lone ESC no sequence claimed
}
