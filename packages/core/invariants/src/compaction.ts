import { isDeepStrictEqual } from 'node:util'
import type { ContentBlock, LlmRequest, Message } from '@dsh/llm'
import { deriveEntries, sessionTurnRequest, type Session } from '@dsh/session'
import type {} from '@dsh/compaction'
import { compareRequest } from './check.ts'

/**
 * Compares a compaction summary request with the log. A `compaction/start` must be open; route, system
 * prompt and tools are the log's last header (the summary reuses the session's prefix); sampling is what
 * `compaction/start` logged (`toolChoice: 'none'`, its `maxOutputTokens`). Every message either stands for a
 * message of the history up to the end of the summarized range (same role, calls, results and images; a text may only be shortened head
 * and tail, with the note saying how much was cut; reasoning may be left out), or is a user text the
 * summarizer logged as `compaction/text` since the compaction began (instructions, part intros, part
 * summaries), possibly shortened the same way.
 */
export function findCompactionDrift(session: Session, request: Readonly<LlmRequest>): string | undefined {
  const start = session.last('compaction/start')
  const end = session.last('compaction/end')
  if (!start || (end && end.seq > start.seq)) return 'a summary request with no open compaction/start in the log'
  const base = sessionTurnRequest(session)
  if (typeof base === 'string') return base
  const { maxOutputTokens } = start.data
  const expected = {
    route: base.route,
    system: base.system,
    tools: base.tools,
    messages: request.messages,
    toolChoice: 'none' as const,
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
  }
  const problem = compareRequest(expected, request)
  if (problem) return `summary request: ${problem}`
  const range = deriveEntries(session.events.slice(0, start.seq))
    .filter((entry) => entry.seq <= start.data.toSeq) // the range and the prefix before it (kept instructions)
    .map((entry) => entry.message)
  const texts = session.events
    .slice(start.seq + 1)
    .flatMap((event) => (event.type === 'compaction/text' ? [(event.data as { text: string }).text] : []))
  for (const [index, message] of request.messages.entries()) {
    if (range.some((logged) => standsFor(message, logged))) continue
    if (
      message.role === 'user' &&
      message.content.length === 1 &&
      message.content[0]!.type === 'text' &&
      texts.some((text) => derivesText((message.content[0] as { text: string }).text, text))
    )
      continue
    return `summary request: message ${index} (${message.role}) is neither a message of the history up to the summarized range's end (seq ${start.data.toSeq}) nor a logged compaction/text`
  }
  return undefined
}

const OMITTED = /\n\[… (\d+) characters omitted …\]\n/g

/** `text` is `original`, or its head and tail around the note `shortenText` writes, with the count right. */
export function derivesText(text: string, original: string): boolean {
  if (text === original) return true
  for (const match of text.matchAll(OMITTED)) {
    const head = text.slice(0, match.index)
    const tail = text.slice(match.index + match[0].length)
    if (
      head.length + tail.length + Number(match[1]) === original.length &&
      original.startsWith(head) &&
      original.endsWith(tail)
    )
      return true
  }
  return false
}

/** A view of `logged` that only shortens: the same role, every call, result and image, texts head and tail. */
function standsFor(message: Message, logged: Message): boolean {
  if (message.role !== logged.role || !Array.isArray(message.content)) return false
  if (message.role === 'assistant') return assistantStandsFor(message.content, logged.content as ContentBlock[])
  if (message.content.length !== logged.content.length) return false
  return message.content.every((block, i) => blockStandsFor(block, logged.content[i]!))
}

function blockStandsFor(block: ContentBlock, logged: ContentBlock): boolean {
  if (block.type !== logged.type) return false
  if (block.type === 'text') return derivesText(block.text, (logged as { text: string }).text)
  if (block.type === 'tool-call') {
    const other = logged as typeof block
    if (block.callId !== other.callId || block.name !== other.name) return false
    if (isDeepStrictEqual(block.arguments, other.arguments)) return true
    const json = typeof other.arguments === 'string' ? other.arguments : JSON.stringify(other.arguments ?? {})
    return typeof block.arguments === 'string' && derivesText(block.arguments, json)
  }
  if (block.type === 'tool-result') {
    const other = logged as typeof block
    const { content: a, ...rest } = block
    const { content: b, ...otherRest } = other
    return (
      isDeepStrictEqual(rest, otherRest) && a.length === b.length && a.every((inner, k) => blockStandsFor(inner, b[k]!))
    )
  }
  return isDeepStrictEqual(block, logged)
}

/** Long reasoning may be left out of a shortened assistant message (a signature cannot be cut). */
function assistantStandsFor(blocks: ContentBlock[], logged: ContentBlock[]): boolean {
  const onlyReasoning = logged.length > 0 && logged.every((block) => block.type === 'reasoning')
  if (onlyReasoning && blocks.length === 1 && blocks[0]!.type === 'text' && blocks[0]!.text === '[reasoning left out]')
    return true
  let j = 0
  for (const block of blocks) {
    while (j < logged.length && logged[j]!.type === 'reasoning' && block.type !== 'reasoning') j++
    if (j >= logged.length || !blockStandsFor(block, logged[j]!)) return false
    j++
  }
  return logged.slice(j).every((block) => block.type === 'reasoning')
}
