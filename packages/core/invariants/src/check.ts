import { isDeepStrictEqual } from 'node:util'
import { SAMPLING_FIELDS, type LlmRequest, type Message, type ToolSchema } from '@dsh/llm'
import { deriveTurnRequest, type DerivedRequest, type Session } from '@dsh/session'

/** Fields of a request that are not sent to the model: not derived, not compared. */
const UNSENT = new Set(['signal', 'origin'])

const show = (value: unknown) => (value === undefined ? 'none' : JSON.stringify(value))

/**
 * Compares a turn's request with what the log derives afresh (DESIGN §5): `deriveTurnRequest` over the
 * session's events. Returns the first difference, named, or undefined.
 */
export function findDrift(session: Session, request: Readonly<LlmRequest>): string | undefined {
  const expected = deriveTurnRequest(session.events)
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
    if (!(key in expected) && !(SAMPLING_FIELDS as readonly string[]).includes(key)) return `the request carries ${key} = ${show(got)}, which the log does not derive`
    return `${key} is ${show(got)} but the log derives ${show(want)}`
  }
  return undefined
}

const routeName = (route: LlmRequest['route'] | undefined) => (route ? `${route.provider}/${route.model}${route.effort ? ` (effort ${route.effort})` : ''}` : 'none')

function toolDifference(want: ToolSchema[], got: unknown): string {
  if (!Array.isArray(got)) return 'the request has no tool list'
  const names = (tools: ToolSchema[]) => tools.map((tool) => tool?.name)
  const added = names(got).filter((name) => !names(want).includes(name))
  const removed = names(want).filter((name) => !names(got).includes(name))
  const parts = [added.length ? `added: ${added.join(', ')}` : '', removed.length ? `removed: ${removed.join(', ')}` : ''].filter(Boolean)
  return parts.join('; ') || 'a schema or the order changed'
}

function compareMessages(expected: readonly Message[], got: unknown): string | undefined {
  if (!Array.isArray(got)) return 'the request has no message list'
  if (expected.length !== got.length) return `the request has ${got.length} messages but the log derives ${expected.length}`
  for (let i = 0; i < expected.length; i++) {
    if (!sameMessage(expected[i]!, got[i])) return `message ${i} (${got[i]?.role}) differs from what the log derives`
  }
  return undefined
}

function sameMessage(a: Message, b: Message): boolean {
  if (!b || a.role !== b.role || !Array.isArray(b.content) || a.content.length !== b.content.length) return false
  for (let i = 0; i < a.content.length; i++) if (!isDeepStrictEqual(a.content[i], b.content[i])) return false
  return Object.keys(b).length === 2
}
