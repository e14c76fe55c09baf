// Agent presets and plan mode over the web host (docs/architecture.md, "Agent presets", "Todo and plan
// mode"): both rows are optional, so a composition without them says so instead of failing to mount.
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/agent-presets'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/plan-mode'
import type { Session } from '@dsh/session'
import type { Methods } from '@dsh/web-protocol'
import { WebError } from '@dsh/webserver'
import { optionalService } from './optional.ts'

type M<K extends keyof Methods> = Methods[K]

export interface AgentModes {
  /** Throws BAD_PARAMS for an unknown or broken preset, before any session exists. */
  checkPreset(name: string): void
  /** Logs the tab's choices on a new session. */
  apply(session: Session, choice: { agentPreset?: string; planMode?: boolean }): void
}

export function registerAgentModes(ctx: Context, agentFor: (id: string) => Promise<Agent>): AgentModes {
  const agentPresets = optionalService(ctx, 'agentPresets')
  const planMode = optionalService(ctx, 'planMode')
  const requirePresets = () => agentPresets() ?? unavailable('agent-presets')
  const requirePlanMode = () => planMode() ?? unavailable('plan-mode')
  const web = ctx.webserver

  web.method<M<'agentPresets.list'>['params'], M<'agentPresets.list'>['result']>(ctx, 'agentPresets.list', {
    handle: () => ({
      agentPresets: (agentPresets()?.list() ?? []).map(({ name, description, source }) => ({
        name,
        description,
        source,
      })),
    }),
  })

  web.method<M<'agent.setPlanMode'>['params'], M<'agent.setPlanMode'>['result']>(ctx, 'agent.setPlanMode', {
    handle: async ({ sessionId, active }) => {
      const service = requirePlanMode()
      const agent = await agentFor(sessionId)
      if (active) service.enter(agent.session, 'user:web-tab')
      else service.exit(agent.session, 'user:web-tab')
      await agent.session.flush()
      return { active: service.active(agent.session) }
    },
  })

  return {
    checkPreset(name) {
      try {
        requirePresets().get(name)
      } catch (error) {
        if (error instanceof WebError) throw error
        throw new WebError('BAD_PARAMS', error instanceof Error ? error.message : String(error))
      }
    },
    apply(session, { agentPreset, planMode: plan }) {
      if (agentPreset) requirePresets().choose(session, agentPreset, 'user:web-tab')
      if (plan) requirePlanMode().enter(session, 'user:web-tab')
    },
  }
}

function unavailable(row: string): never {
  throw new WebError('UNAVAILABLE', `no ${row} plugin is mounted in this profile`)
}
