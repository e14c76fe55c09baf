import { stripVTControlCharacters } from 'node:util'
import type { SessionSummary } from '@dsh/session'

/** C0 and C1 control characters other than newline and tab (a carriage return could overwrite a shown line). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Text a terminal shows as text and nothing else. What a model wrote (or a file, or a command printed) is
 * untrusted: escape sequences could move the cursor over earlier lines, retitle the window or write the
 * clipboard (OSC 52), so they are removed, and any other control character is shown as `\xNN`.
 */
export function printable(text: string): string {
  return stripVTControlCharacters(text).replace(
    CONTROL_CHARACTERS,
    (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  )
}

/** One line of at most `max` characters: whitespace collapsed, cut with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = printable(text.replace(/\s+/g, ' ')).trim()
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat
}

/** The text blocks of a content array, joined. */
export function textOf(content: readonly { type: string; text?: string }[]): string {
  return content
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('')
}

/** Local time as `YYYY-MM-DD HH:MM:SS` (listings are read by people in their own zone). */
export function localTime(epochMs: number): string {
  const d = new Date(epochMs)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
}

/** A short human summary of tool arguments when the tool gives none: its first string value, else JSON. */
export function summarizeArguments(args: unknown, max: number): string {
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const first = Object.values(args).find((value) => typeof value === 'string')
    if (typeof first === 'string') return oneLine(first, max)
  }
  return oneLine(typeof args === 'string' ? args : (JSON.stringify(args) ?? ''), max)
}

/** The listing row of one session: id, last activity, turns, status, title or first prompt. */
export function sessionRow(summary: SessionSummary, titleChars: number): string {
  const status = summary.damaged
    ? 'damaged'
    : summary.live
      ? 'running'
      : summary.status === 'open'
        ? 'interrupted'
        : 'idle'
  const title = `${summary.archived ? '[archived] ' : ''}${summary.title ?? summary.firstPrompt ?? '(no prompt)'}`
  const turns = `${summary.turns} turn${summary.turns === 1 ? '' : 's'}`
  return [
    summary.id,
    localTime(summary.updatedAt),
    turns.padStart(9),
    status.padEnd(11),
    oneLine(title, titleChars),
  ].join('  ')
}
