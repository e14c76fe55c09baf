import { isDeepStrictEqual } from 'node:util'
import { SAMPLING_FIELDS, type LlmRequest, type Sampling } from '@dsh/llm'
import { deriveMessages } from './derive.ts'
import type { SessionEvent } from './events.ts'
import type { Session } from './session.ts'

/** A request as the log derives it: everything but the signal and the origin. */
export type DerivedRequest = Omit<LlmRequest, 'signal' | 'origin'>

function last<K extends SessionEvent['type']>(events: readonly SessionEvent[], type: K): SessionEvent<K> | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.type === type) return events[i] as SessionEvent<K>
  return undefined
}

/** The sampling fields a header sets, without the absent ones (an absent field is the provider's default). */
export function samplingOf(sampling: Sampling | undefined): Sampling {
  const out: Record<string, unknown> = {}
  for (const field of SAMPLING_FIELDS) if (sampling?.[field] !== undefined) out[field] = sampling[field]
  return out as Sampling
}

/**
 * The next request of a turn, from the log alone (DESIGN §5): the route, system prompt, tools and sampling of
 * the last `request/header` and `request/context`, and the history folded afresh. A string names what is
 * missing. Pure: the loop builds its request with it and the request check compares with it.
 */
export function deriveTurnRequest(events: readonly SessionEvent[]): DerivedRequest | string {
  const header = last(events, 'request/header')?.data
  if (!header) return 'no request/header event precedes the request'
  const context = last(events, 'request/context')?.data
  if (!context) return 'no request/context event precedes the request'
  const route: LlmRequest['route'] = { provider: context.provider, model: context.model }
  if (context.effort) route.effort = context.effort as NonNullable<LlmRequest['route']['effort']>
  return { route, system: header.system, messages: deriveMessages(events), tools: header.tools, ...samplingOf(header.sampling) }
}

/**
 * Logs what a request will carry besides history, where it differs from the log: `request/header` (system
 * prompt, tools, sampling) and `request/context` (route and window). After it, `deriveTurnRequest` derives
 * exactly that request. Used by the loop and by compaction, so both build requests the same way.
 */
export function logRequestHeader(session: Session, request: Pick<LlmRequest, 'route' | 'system' | 'tools'> & Sampling, contextWindow: number): void {
  const sampling = samplingOf(request)
  const header = { system: request.system, tools: request.tools, ...(Object.keys(sampling).length ? { sampling } : {}) }
  const current = session.last('request/header')?.data
  if (!current || !isDeepStrictEqual(current, header)) session.append('request/header', header)
  const { provider, model, effort } = request.route
  const context = { provider, model, contextWindow, ...(effort ? { effort } : {}) }
  const currentContext = session.last('request/context')?.data
  if (!currentContext || !isDeepStrictEqual(currentContext, context)) session.append('request/context', context)
}
