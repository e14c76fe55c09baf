import { stripVTControlCharacters } from 'node:util'

/** C0 and C1 control characters other than newline and tab (a carriage return could overwrite a shown line). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Text a terminal shows as text and nothing else. What a model wrote (or a file, or a command printed) is
 * untrusted: escape sequences could move the cursor over the transcript, retitle the window or write the
 * clipboard (OSC 52), so they are removed and any other control character is shown as `\xNN`. Tabs become
 * spaces (a tab's width is the terminal's, which would throw the layout off).
 */
export function printable(text: string): string {
  return stripVTControlCharacters(text)
    .replace(/\t/g, '  ')
    .replace(CONTROL_CHARACTERS, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** One line of at most `max` characters: whitespace collapsed, cut with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = printable(text.replace(/\s+/g, ' ')).trim()
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat
}

/** `850ms`, `4.2s`, `2m05s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  const minutes = Math.floor(ms / 60_000)
  return `${minutes}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`
}

/** `980`, `12.3k`, `1.2M` tokens. */
export function tokens(count: number): string {
  if (count < 1000) return String(count)
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`
  return `${(count / 1_000_000).toFixed(1)}M`
}

/** The last `max` lines of a text, with a line saying how many were left out above. */
export function tail(text: string, max: number): string[] {
  const lines = text.replace(/\n+$/, '').split('\n')
  if (lines.length <= max) return lines
  return [`… ${lines.length - max} more lines above`, ...lines.slice(-max)]
}

/** The first `max` lines of a text, with a line saying how many were left out below. */
export function head(text: string, max: number): string[] {
  const lines = text.replace(/\n+$/, '').split('\n')
  if (lines.length <= max) return lines
  return [...lines.slice(0, max), `… ${lines.length - max} more lines`]
}
