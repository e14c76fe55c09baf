// Runtime context (issue #20 part 2; docs/prompt.md, "Runtime context"): model-visible, so logged.
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/agent'
import { Config } from './config.ts'
import { gatherContext, gatherFacts, sessionFor, type GatherFor, type RuntimeContext } from './gather.ts'

export { Config }
export { gatherContext, sessionFor, type GatherFor, type RuntimeContext } from './gather.ts'

/** A preview of the context a new session in `cwd` would log (`dsh prompt show`); the listener fills `result`. */
export interface RuntimeContextPreview {
  cwd: string
  where: GatherFor
  result?: RuntimeContext
}

declare module '@dsh/cordis' {
  interface Events {
    /** @mode serial — the runtime-context row gathers a preview with its own config into `request.result`. */
    'runtime-context/preview'(request: RuntimeContextPreview): Promise<void>
  }
}

export const name = 'runtime-context'
export const inject = ['sessions', 'fs', 'subprocess']

const sameFacts = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  return [...keys].every((key) => a[key] === b[key])
}

/**
 * When a turn's first step is entered (`agent/pre-step`, step 0), gathers the runtime context and logs it as
 * `runtime/context` when the session has none yet or its stable facts changed since the last one (read from
 * the log, so a resumed session does not repeat it). It is appended before the step's user messages, so the
 * user's words stay the last message; `deriveMessages` shows it as a user message where it was logged (in
 * the cached prefix), and the request check sees it derived from the log.
 */
export function apply(ctx: Context, config: Config) {
  ctx.on('runtime-context/preview', async (request) => {
    request.result = await gatherContext(ctx, request.cwd, config, request.where)
  })
  ctx.on('agent/pre-step', async (step, next) => {
    const decision = await next()
    if (decision.action !== 'enter' || step.step !== 0) return decision
    const session = step.agent.session
    const where = await sessionFor(ctx, session)
    const now = new Date()
    // The facts first: when they are the last context's, nothing more is gathered (docs/performance.md).
    const facts = await gatherFacts(ctx, step.agent.cwd, config, where, now)
    const last = session.last('runtime/context')
    if (!last || !sameFacts(last.data.facts, facts))
      session.append('runtime/context', await gatherContext(ctx, step.agent.cwd, config, where, now, facts))
    return decision
  })
}
