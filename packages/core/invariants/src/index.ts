import type { Context } from '@dsh/cordis'
import type {} from '@dsh/llm'
import type {} from '@dsh/session'
import { compareRequest, findDrift, findDriftAfresh } from './check.ts'
import { findCompactionDrift } from './compaction.ts'
import { findTitleDrift } from './title.ts'

export { compareRequest, findCompactionDrift, findDrift, findDriftAfresh, findTitleDrift }

export const name = 'invariants'
export const inject = ['sessions', 'llm']

/**
 * Mounted in every shipped bundle (boot refuses a tree without it): the request check of the `llm/stream`
 * boundary, run by `ctx.llm` on the frozen request before the first listener and after the last one.
 * "Model-visible means logged" is checked where the request leaves, whoever built it.
 */
export function apply(ctx: Context) {
  const logger = ctx.logger('invariants')
  ctx.llm.useGuard(ctx, {
    check(request) {
      const origin = request.origin!
      if ('sessionless' in origin)
        return typeof origin.sessionless === 'string' && origin.sessionless
          ? undefined
          : 'a session-less request must say why it has no session'
      const session = ctx.sessions.get(origin.sessionId)
      const drift = !session
        ? `session ${origin.sessionId} is not open in this process`
        : origin.purpose === 'turn'
          ? findDrift(session, request)
          : origin.purpose === 'compaction'
            ? findCompactionDrift(session, request)
            : origin.purpose === 'title'
              ? findTitleDrift(session, request)
              : `unknown request purpose ${JSON.stringify(origin.purpose)}`
      if (drift) logger.error('session %s: %s', origin.sessionId, drift)
      return drift
    },
  })
}
