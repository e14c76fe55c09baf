import type { LlmRequest } from '@dsh/llm'
import type { Session } from '@dsh/session'
import type {} from '@dsh/session-admin'
import { compareRequest } from './check.ts'

/**
 * Compares a title request with the log: a `title/request` must be open (no `title/response` after it), and
 * the request is exactly what it logged — its route and system prompt, one user text (the logged prompt), no
 * tools, its output limit. Nothing of the session's history rides along unlogged.
 */
export function findTitleDrift(session: Session, request: Readonly<LlmRequest>): string | undefined {
  const asked = session.last('title/request')
  const answered = session.last('title/response')
  if (!asked || (answered && answered.seq > asked.seq)) return 'a title request with no open title/request in the log'
  const { route, system, prompt, maxOutputTokens } = asked.data
  const problem = compareRequest(
    {
      route,
      system,
      tools: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
      maxOutputTokens,
    },
    request,
  )
  return problem ? `title request: ${problem}` : undefined
}
