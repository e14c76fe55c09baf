import type { Context } from '@dsh/cordis'
import type {} from '@dsh/agent'
import { findDrift } from './check.ts'

export { findDrift }

/** A request that is not what the log derives: the turn ends with this error before anything is sent. */
export class InvariantViolation extends Error {
  override name = 'InvariantViolation'
  readonly code = 'INVARIANT_VIOLATION'
}

export const name = 'invariants'
export const inject = ['sessions']

/** Mounted in every shipped bundle: "model-visible means logged" is checked, not trusted. */
export function apply(ctx: Context) {
  ctx.on('agent/before-model-call', async (agent, request) => {
    const drift = findDrift(agent.session, request)
    if (drift) {
      ctx.logger('invariants').error('session %s: %s', agent.session.id, drift)
      throw new InvariantViolation(`request refused: ${drift} (model-visible input must come from the session log)`)
    }
  })
}
