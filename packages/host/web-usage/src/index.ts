// Usage and cost over the web host (docs/architecture.md, "Usage and cost"; issue 17 §4): the session header
// and the usage page read the log through @dsh/usage-kit, priced by ctx.usagePrices, like `dsh usage`.
import { realpathSync } from 'node:fs'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/session'
import { lastTurnUsage, sessionUsage, storedUsageSource, usageReport } from '@dsh/usage-kit'
import type {} from '@dsh/usage-prices'
import type { Methods } from '@dsh/web-protocol'
import { WebError } from '@dsh/webserver'

export const name = 'web-usage'
export const inject = ['webserver', 'sessions', 'usagePrices']

/** Paths compare by their real location, as `dsh usage --cwd` compares them. */
function canonical(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

export function apply(ctx: Context) {
  type M<K extends keyof Methods> = Methods[K]

  ctx.webserver.method<M<'usage.session'>['params'], M<'usage.session'>['result']>(ctx, 'usage.session', {
    // A session open in this process is read from memory (its log as of now); a stored one from disk.
    handle: async ({ sessionId }) => {
      const open = ctx.sessions.get(sessionId)
      let events
      try {
        events = open ? open.events : (await ctx.sessions.read(sessionId)).events
      } catch (error) {
        throw new WebError(
          'NOT_FOUND',
          `session ${sessionId}: ${error instanceof Error ? error.message : String(error)}`,
        )
      }
      const prices = ctx.usagePrices.table()
      return { ...sessionUsage(events, prices), turn: lastTurnUsage(events, prices) }
    },
  })

  ctx.webserver.method<M<'usage.report'>['params'], M<'usage.report'>['result']>(ctx, 'usage.report', {
    handle: async ({ by, cwd, since }) => {
      const dir = cwd === undefined ? undefined : canonical(cwd)
      return usageReport(
        storedUsageSource(ctx.sessions, ctx.get('sessionPersistence')),
        { by, ...(dir !== undefined ? { dir } : {}), ...(since !== undefined ? { since } : {}) },
        ctx.usagePrices.table(),
        (a, b) => canonical(a) === b,
      )
    },
  })
}
