import type { LlmRequest, Message } from '@dsh/llm'
import { deriveEntries, deriveTurnRequest, type Session } from '@dsh/session'
import type {} from '@dsh/compaction'
import { compareRequest } from './check.ts'

/**
 * Compares a compaction summary request with the log: a `compaction/start` must be open; route, system
 * prompt and tools are the log's last header (the summary reuses the session's prefix); sampling is what
 * `compaction/start` logged (`toolChoice: 'none'`, its `maxOutputTokens`); and every message that is not
 * plain user text (the instructions, part intros and part summaries the summarizer writes) stands for a
 * message of the summarized range: the same role, the same tool calls and results, images only as logged.
 */
export function findCompactionDrift(session: Session, request: Readonly<LlmRequest>): string | undefined {
  const start = session.last('compaction/start')
  const end = session.last('compaction/end')
  if (!start || (end && end.seq > start.seq)) return 'a summary request with no open compaction/start in the log'
  const base = deriveTurnRequest(session.events)
  if (typeof base === 'string') return base
  const { maxOutputTokens } = start.data
  const expected = { route: base.route, system: base.system, tools: base.tools, messages: request.messages, toolChoice: 'none' as const, ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}) }
  const problem = compareRequest(expected, request)
  if (problem) return `summary request: ${problem}`
  const range = deriveEntries(session.events.slice(0, start.seq))
    .filter((entry) => entry.seq >= start.data.fromSeq && entry.seq <= start.data.toSeq)
    .map((entry) => entry.message)
  for (const [index, message] of request.messages.entries()) {
    if (isPlainUserText(message)) continue
    if (!range.some((logged) => standsFor(message, logged))) return `summary request: message ${index} (${message.role}) is not a message of the summarized range ${start.data.fromSeq}..${start.data.toSeq}`
  }
  return undefined
}

const isPlainUserText = (message: Message) => message.role === 'user' && message.content.every((block) => block.type === 'text')

/** A shortened view keeps the role, every call and result id and every image; only texts may be shorter. */
function standsFor(message: Message, logged: Message): boolean {
  if (message.role !== logged.role || message.content.length !== logged.content.length) return false
  return message.content.every((block, i) => {
    const other = logged.content[i]! as any
    if (block.type !== other.type) return false
    if (block.type === 'text' || block.type === 'reasoning') return other.text.length >= block.text.length
    if (block.type === 'tool-call') return block.callId === other.callId && block.name === other.name
    if (block.type === 'tool-result') return block.callId === other.callId && block.content.every((inner, k) => inner.type === 'text' || JSON.stringify(inner) === JSON.stringify(other.content[k]))
    return JSON.stringify(block) === JSON.stringify(other)
  })
}
