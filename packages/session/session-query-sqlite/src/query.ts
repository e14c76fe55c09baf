import type { Highlight } from '@dsh/session-query'
import { MARK_CLOSE, MARK_OPEN } from './extract.ts'

/**
 * A user's query as an FTS5 expression that cannot be a syntax error: every whitespace-separated word with a
 * letter or digit in it becomes a quoted string (inner quotes doubled) matched as a prefix, and all of them
 * are required. `src/index.ts` stays one phrase (the tokenizer splits it the same way it split the log), so
 * it matches that path, not three words anywhere. `whole` leaves the prefix mark out (the words as
 * typed, for a snippet). Returns undefined when nothing is searchable.
 */
export function ftsExpression(query: string, match: 'prefix' | 'whole' = 'prefix'): string | undefined {
  const words = query.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word))
  if (!words.length) return undefined
  return words.map((word) => `"${word.replace(/"/g, '""')}"${match === 'prefix' ? '*' : ''}`).join(' ')
}

/** Turns FTS5 snippet markers into plain text plus the offsets of the marked stretches. */
export function parseSnippet(marked: string): { text: string; highlights: Highlight[] } {
  const highlights: Highlight[] = []
  let text = ''
  let start = -1
  for (const char of marked) {
    if (char === MARK_OPEN) start = text.length
    else if (char === MARK_CLOSE) {
      if (start >= 0 && text.length > start) highlights.push({ start, end: text.length })
      start = -1
    } else text += char
  }
  return { text: text.replace(/\s+/g, ' '), highlights: compact(text, highlights) }
}

/** Whitespace runs collapse to one space in the snippet: shift the offsets with them. */
function compact(text: string, highlights: Highlight[]): Highlight[] {
  const map: number[] = []
  let out = 0
  let previousSpace = false
  for (let i = 0; i <= text.length; i++) {
    const space = i < text.length && /\s/.test(text[i]!)
    map[i] = out
    if (i < text.length && !(space && previousSpace)) out++
    previousSpace = space
  }
  return highlights.map(({ start, end }) => ({ start: map[start]!, end: map[end]! }))
}
