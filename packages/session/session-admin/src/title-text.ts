// Pure helpers over prompt and answer text: what a list shows as a session's name.
import { stripVTControlCharacters } from 'node:util'

/** A file an editor attached to the prompt (`@dsh/acp` writes it: `<context source="…">…</context>`). */
const CONTEXT_BLOCK = /<context source="[^"]*">[\s\S]*?<\/context>/g
/** C0 and C1 control characters but tab and newline (folded to spaces after). */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
/** A mention an editor could not inline (`[referenced: path (name)]`). */
const REFERENCE = /\[referenced: [^\]\n]*\]/g

/** The text blocks of a user message joined, with mention markup removed and whitespace folded to one line. */
export function promptText(content: readonly { type: string; text?: string }[]): string {
  return content
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join(' ')
    .replace(CONTEXT_BLOCK, ' ')
    .replace(REFERENCE, ' ')
    .replace(/\s+/g, ' ')
    .trim()
}

/**
 * A name fit for any list: terminal escape sequences and other control characters removed (a title a
 * prompt-injected model wrote is printed by `dsh sessions list` to a terminal), whitespace folded to one line.
 */
export function labelText(text: string): string {
  return stripVTControlCharacters(text).replace(CONTROL, '').replace(/\s+/g, ' ').trim()
}

/** `text` cut to `maxChars` with an ellipsis. */
export function shorten(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text
}

/**
 * A model's answer made a title: its first non-empty line, without quotes, a `Title:` lead or closing
 * punctuation, cut to `maxChars`. Empty when nothing is left.
 */
export function titleFromAnswer(answer: string, maxChars: number): string {
  const line = stripVTControlCharacters(answer)
    .split('\n')
    .map((part) => part.trim())
    .find(Boolean)
  if (!line) return ''
  const bare = line
    .replace(/^(title|titel)\s*:\s*/i, '')
    .replace(/^["'`*#\s]+|["'`*\s]+$/g, '')
    .replace(/[.。]+$/, '')
  return shorten(labelText(bare), maxChars)
}
