// The Changes panel's methods (docs/architecture.md, "Review and rewind"): a session's changed files with
// both texts (the page draws numbered diffs), and rewind to before a turn. Both rows are optional.
import type {} from '@dsh/checkpoints'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/session-changes'
import type { Methods } from '@dsh/web-protocol'
import { WebError } from '@dsh/webserver'
import type { Agent } from '@dsh/agent'
import { optionalService } from './optional.ts'

type M<K extends keyof Methods> = Methods[K]

export function registerReview(
  ctx: Context,
  agentFor: (id: string) => Promise<Agent>,
  adopt: (agent: Agent) => void,
): void {
  const changes = optionalService(ctx, 'sessionChanges')
  const checkpoints = optionalService(ctx, 'checkpoints')
  const web = ctx.webserver

  web.method<M<'sessions.changes'>['params'], M<'sessions.changes'>['result']>(ctx, 'sessions.changes', {
    handle: async ({ sessionId, fromTurn }) => {
      const service = changes()
      if (!service) throw new WebError('UNAVAILABLE', 'no session-changes plugin is mounted in this profile')
      return service.changes(sessionId, fromTurn !== undefined ? { fromTurn } : {})
    },
  })

  web.method<M<'sessions.rewind'>['params'], M<'sessions.rewind'>['result']>(ctx, 'sessions.rewind', {
    handle: async ({ sessionId, toTurn, force, fork }) => {
      const service = checkpoints()
      if (!service) throw new WebError('UNAVAILABLE', 'no checkpoints plugin is mounted in this profile')
      const agent = await agentFor(sessionId)
      if (agent.running) throw new WebError('CONFLICT', 'the session is running a turn: stop it, then rewind')
      const done = await service.rewind(agent.session, { toTurn, force: !!force, fork: !!fork, actor: 'user:web-tab' })
      // The fork is a session of this window: the page opens it and its next message resumes an agent there.
      if (done.forkedTo) adopt(await ctx.agents.resume(done.forkedTo))
      return done
    },
  })
}
