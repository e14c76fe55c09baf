import { isDeepStrictEqual } from 'node:util'
import { SAMPLING_FIELDS, type LlmRequest, type Message, type Sampling } from '@dsh/llm'
import { deriveMessages } from './derive.ts'
import type { SessionEvent, SessionEventMap } from './events.ts'
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
 * The next request of a turn, from the log alone (docs/architecture.md, "The session log"): the route, system prompt, tools and sampling of
 * the last `request/header` and `request/context`, and the history folded afresh. A string names what is
 * missing. Pure: for replay, tests, and as the reference the incremental form is checked against.
 */
export function deriveTurnRequest(events: readonly SessionEvent[]): DerivedRequest | string {
  return requestOf(last(events, 'request/header')?.data, last(events, 'request/context')?.data, () =>
    deriveMessages(events),
  )
}

/**
 * `deriveTurnRequest` of the session's log, from what the session keeps up to date as events are appended
 * (its incremental, sealed fold and the last event of each kind): what the request check runs before every
 * model call, at a cost that does not grow with the log (docs/architecture.md, "The session log").
 */
export function sessionTurnRequest(session: Session): DerivedRequest | string {
  return requestOf(
    session.last('request/header')?.data,
    session.last('request/context')?.data,
    () => session.messages() as Message[],
  )
}

function requestOf(
  header: SessionEventMap['request/header'] | undefined,
  context: SessionEventMap['request/context'] | undefined,
  messages: () => Message[],
): DerivedRequest | string {
  if (!header) return 'no request/header event precedes the request'
  if (!context) return 'no request/context event precedes the request'
  const route: LlmRequest['route'] = { provider: context.provider, model: context.model }
  if (context.effort) route.effort = context.effort as NonNullable<LlmRequest['route']['effort']>
  return { route, system: header.system, messages: messages(), tools: header.tools, ...samplingOf(header.sampling) }
}

/**
 * Logs what a request will carry besides history, where it differs from the log: `request/header` (system
 * prompt, tools, sampling) and `request/context` (route and window). After it, `deriveTurnRequest` derives
 * exactly that request. Used by the loop and by compaction, so both build requests the same way.
 */
export function logRequestHeader(
  session: Session,
  request: Pick<LlmRequest, 'route' | 'system' | 'tools'> & Sampling,
  contextWindow: number,
): void {
  const sampling = samplingOf(request)
  const header = { system: request.system, tools: request.tools, ...(Object.keys(sampling).length ? { sampling } : {}) }
  const current = session.last('request/header')?.data
  if (!current || !isDeepStrictEqual(current, header)) session.append('request/header', header)
  const { provider, model, effort } = request.route
  const context = { provider, model, contextWindow, ...(effort ? { effort } : {}) }
  const currentContext = session.last('request/context')?.data
  if (!currentContext || !isDeepStrictEqual(currentContext, context)) session.append('request/context', context)
}
