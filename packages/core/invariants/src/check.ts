import { isDeepStrictEqual } from 'node:util'
import type { LlmRequest, Message } from '@dsh/llm'
import { deriveMessages, type Session } from '@dsh/session'

/**
 * Compares a request with what the log says the model may see (DESIGN §5): the last `request/header`
 * (system prompt and tools), the last `request/context` (provider and model) and the history folded afresh
 * from the events. Returns the first difference, or undefined.
 */
export function findDrift(session: Session, request: LlmRequest): string | undefined {
  const header = session.last('request/header')?.data
  if (!header) return 'no request/header event precedes the request'
  if (header.system !== request.system) return 'the system prompt differs from the last request/header'
  if (!isDeepStrictEqual(header.tools, request.tools)) return 'the tool schemas differ from the last request/header'
  const context = session.last('request/context')?.data
  if (!context) return 'no request/context event precedes the request'
  if (context.provider !== request.route.provider || context.model !== request.route.model || (context.effort ?? undefined) !== (request.route.effort ?? undefined)) {
    return `the route ${request.route.provider}/${request.route.model} differs from the last request/context (${context.provider}/${context.model})`
  }
  const expected = deriveMessages(session.events)
  if (expected.length !== request.messages.length) {
    return `the request has ${request.messages.length} messages but the log derives ${expected.length}`
  }
  for (let i = 0; i < expected.length; i++) {
    if (!sameMessage(expected[i]!, request.messages[i]!)) return `message ${i} (${request.messages[i]!.role}) differs from what the log derives`
  }
  return undefined
}

/** Blocks of a derived message are the log's own frozen objects, so identity settles most comparisons. */
function sameMessage(a: Message, b: Message): boolean {
  if (a.role !== b.role || a.content.length !== b.content.length) return false
  for (let i = 0; i < a.content.length; i++) {
    if (a.content[i] !== b.content[i] && !isDeepStrictEqual(a.content[i], b.content[i])) return false
  }
  return Object.keys(b).length === 2
}
