/**
 * Who changed a session's authority (docs/security.md: every authority change names its actor). Only people and the
 * clients acting for them appear here, never the agent: nothing the model runs can name itself as an actor.
 * `default` is the configured default written at a session's start; `user:slash-command` a command a person
 * typed (`/preset`): surfaces run commands only from what their user sends, never from model output.
 */
export const AUTHORITY_ACTORS = [
  'user:web-tab',
  'user:tui',
  'user:cli-flag',
  'user:settings',
  'user:slash-command',
  'client:sdk',
  'client:acp',
  'default',
] as const
export type AuthorityActor = (typeof AUTHORITY_ACTORS)[number]

/** What the audit shows for an event logged before actors were recorded. */
export const UNKNOWN_ACTOR = 'unknown'

export const isActor = (value: unknown): value is AuthorityActor => AUTHORITY_ACTORS.includes(value as AuthorityActor)

/** A validator message for an event's `actor` field, or undefined when it names a known actor. */
export function actorProblem(value: unknown): string | undefined {
  return isActor(value)
    ? undefined
    : `actor must be one of ${AUTHORITY_ACTORS.join(', ')} (got ${JSON.stringify(value)})`
}

/** Throws a TypeError naming `what` when `value` is not a known actor (the authority-changing APIs call it first). */
export function assertActor(value: unknown, what: string): asserts value is AuthorityActor {
  const problem = actorProblem(value)
  if (problem) throw new TypeError(`${what}: ${problem}`)
}

/** The actor of a logged authority event, `unknown` for one written before actors existed. */
export function actorOf(data: unknown): string {
  const actor = (data as { actor?: unknown } | null | undefined)?.actor
  return typeof actor === 'string' ? actor : UNKNOWN_ACTOR
}
