import { isDeepStrictEqual } from 'node:util'
import { SAMPLING_FIELDS, type LlmRequest, type Message, type ToolSchema } from '@dsh/llm'
import {
  deriveTurnRequest,
  sessionTurnRequest,
  type DerivedRequest,
  type Session,
  type SessionEvent,
} from '@dsh/session'

/** Fields of a request that are not sent to the model: not derived, not compared. */
const UNSENT = new Set(['signal', 'origin'])

const show = (value: unknown) => (value === undefined ? 'none' : JSON.stringify(value))

/**
 * Compares a turn's request with what the log derives (docs/architecture.md, "The session log"): `sessionTurnRequest`, the session's
 * incremental fold, whose messages are sealed, so a message the request shares with it is the same object and
 * costs one comparison (docs/architecture.md, "The session log"). Returns the first difference, named.
 */
export function findDrift(session: Session, request: Readonly<LlmRequest>): string | undefined {
  const expected = sessionTurnRequest(session)
  if (typeof expected === 'string') return expected
  return compareRequest(expected, request)
}

/** The same check against the log folded afresh: the reference the incremental check is tested against. */
export function findDriftAfresh(events: readonly SessionEvent[], request: Readonly<LlmRequest>): string | undefined {
  const expected = deriveTurnRequest(events)
  if (typeof expected === 'string') return expected
  return compareRequest(expected, request)
}

/** Every sent field of `request` against `expected`: a field the log does not derive is a difference too. */
export function compareRequest(expected: DerivedRequest, request: Readonly<LlmRequest>): string | undefined {
  const keys = new Set([...Object.keys(expected), ...Object.keys(request)].filter((key) => !UNSENT.has(key)))
  for (const key of ['route', 'system', 'tools', 'messages', ...[...keys].sort()]) {
    if (!keys.has(key)) continue
    keys.delete(key)
    const want = (expected as any)[key]
    const got = (request as any)[key]
    if (key === 'messages') {
      const problem = compareMessages(want, got)
      if (problem) return problem
      continue
    }
    if (isDeepStrictEqual(want, got)) continue
    if (key === 'system') return 'the system prompt differs from the last request/header'
    if (key === 'tools') return `the tool schemas differ from the last request/header (${toolDifference(want, got)})`
    if (key === 'route') return `the route ${routeName(got)} differs from the last request/context (${routeName(want)})`
    if (!(key in expected) && !(SAMPLING_FIELDS as readonly string[]).includes(key))
      return `the request carries ${key} = ${show(got)}, which the log does not derive`
    return `${key} is ${show(got)} but the log derives ${show(want)}`
  }
  return undefined
}

const routeName = (route: LlmRequest['route'] | undefined) =>
  route ? `${route.provider}/${route.model}${route.effort ? ` (effort ${route.effort})` : ''}` : 'none'

function toolDifference(want: ToolSchema[], got: unknown): string {
  if (!Array.isArray(got)) return 'the request has no tool list'
  const names = (tools: ToolSchema[]) => tools.map((tool) => tool?.name)
  const added = names(got).filter((name) => !names(want).includes(name))
  const removed = names(want).filter((name) => !names(got).includes(name))
  const parts = [
    added.length ? `added: ${added.join(', ')}` : '',
    removed.length ? `removed: ${removed.join(', ')}` : '',
  ].filter(Boolean)
  return parts.join('; ') || 'a schema or the order changed'
}

function compareMessages(expected: readonly Message[], got: unknown): string | undefined {
  if (!Array.isArray(got)) return 'the request has no message list'
  if (expected.length !== got.length)
    return `the request has ${got.length} messages but the log derives ${expected.length}`
  for (let i = 0; i < expected.length; i++) {
    if (!sameMessage(expected[i]!, got[i])) return `message ${i} (${got[i]?.role}) differs from what the log derives`
  }
  return undefined
}

function sameMessage(a: Message, b: Message): boolean {
  if (a === b) return true // the fold's own sealed message: nothing in it can differ
  if (!b || a.role !== b.role || !Array.isArray(b.content) || a.content.length !== b.content.length) return false
  for (let i = 0; i < a.content.length; i++) if (!isDeepStrictEqual(a.content[i], b.content[i])) return false
  return Object.keys(b).length === 2
}
