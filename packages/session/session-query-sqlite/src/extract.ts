import { foldTitle, promptText, shorten, type TitleSource } from '@dsh/session-admin'
import type { HitSource } from '@dsh/session-query'

/** One searchable piece of one event. */
export interface IndexedText {
  source: HitSource
  text: string
}

/** The facts about a session the listing columns need, picked up while its events are indexed. */
export interface SessionFacts {
  title?: string
  /** Who named it, within one pass over the log (a `model` title never replaces a `user` one). */
  titleSource?: TitleSource
  firstPrompt?: string
}

/**
 * Snippet markers: private-use characters that cannot come from a log, because they are removed from every
 * text before it is indexed. The query side turns them into highlight offsets.
 */
export const MARK_OPEN = '\uE000'
export const MARK_CLOSE = '\uE001'
const MARKERS = /[\uE000\uE001]/g

/**
 * What of one logged event is worth finding: the user's words (not instructions files or summaries, which
 * repeat other text), the assistant's text, a tool's name with every string in its arguments (commands,
 * paths, patterns) and a tool's output text. Reasoning is left out: it is not what a user remembers saying.
 */
export function indexedText(event: { type: string; data?: any }, maxChars: number): IndexedText | undefined {
  const data = event.data ?? {}
  let source: HitSource
  let text: string
  if (event.type === 'user/message') {
    if (data.source !== 'user' && data.source !== 'steer' && data.source !== 'inject') return undefined
    source = 'user'
    text = textOf(data.content)
  } else if (event.type === 'assistant/message') {
    source = 'assistant'
    text = textOf(data.content)
  } else if (event.type === 'tool/call') {
    source = 'tool-call'
    text = [typeof data.name === 'string' ? data.name : '', ...stringsIn(data.arguments)].join(' ')
  } else if (event.type === 'tool/result') {
    source = 'tool-result'
    text = [textOf(data.content), typeof data.error?.message === 'string' ? data.error.message : ''].join(' ')
  } else return undefined
  text = text.replace(MARKERS, ' ').trim()
  if (!text) return undefined
  return { source, text: text.length > maxChars ? text.slice(0, maxChars) : text }
}

/** Updates the listing facts from one event: the first user prompt (mention markup removed), and the title as `foldTitle` reads it. */
export function foldFacts(facts: SessionFacts, event: { type: string; data?: any }, promptChars: number): void {
  const data = event.data ?? {}
  if (event.type === 'user/message' && data.source === 'user' && facts.firstPrompt === undefined) {
    facts.firstPrompt = shorten(
      promptText(Array.isArray(data.content) ? data.content : [{ type: 'text', text: textOf(data.content) }]),
      promptChars,
    )
  } else if (event.type === 'session/title' && typeof data.title === 'string')
    Object.assign(facts, foldTitle(facts, { title: data.title, source: data.source === 'user' ? 'user' : 'model' }))
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .flatMap((block) => (block && block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('\n')
}

function stringsIn(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value]
  if (depth > 4 || value === null || typeof value !== 'object') return []
  return Object.values(value).flatMap((item) => stringsIn(item, depth + 1))
}
