// Agent presets and plan mode for programs (docs/architecture.md, "Agent presets", "Todo and plan mode"):
// both rows are optional, so a runtime without them refuses the parameter by name.
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/agent-presets'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/plan-mode'
import { requestFailed } from './errors.ts'

function agentPresets(ctx: Context) {
  const service = ctx.get('agentPresets')
  if (!service)
    throw requestFailed(
      'AGENT_PRESETS_UNAVAILABLE',
      'no agent-presets row is mounted in this runtime, so an agent preset cannot be chosen',
      'agentPreset',
    )
  return service
}

function planMode(ctx: Context, field: string) {
  const service = ctx.get('planMode')
  if (!service) throw requestFailed('PLAN_MODE_UNAVAILABLE', 'no plan-mode row is mounted in this runtime', field)
  return service
}

/** Refuses an unknown (or broken user) agent preset before any session exists. */
export function checkAgentPreset(ctx: Context, name: string): void {
  try {
    agentPresets(ctx).get(name)
  } catch (error) {
    const code =
      error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'UNKNOWN_AGENT_PRESET'
    throw requestFailed(code, error instanceof Error ? error.message : String(error), 'agentPreset')
  }
}

/** Logs a new session's agent preset and plan mode, chosen by the program. */
export function applyAgentModes(
  ctx: Context,
  agent: Agent,
  params: { agentPreset?: string; planMode?: boolean },
): void {
  if (params.agentPreset !== undefined) agentPresets(ctx).choose(agent.session, params.agentPreset, 'client:sdk')
  if (params.planMode) planMode(ctx, 'planMode').enter(agent.session, 'client:sdk')
}

export function setPlanMode(ctx: Context, agent: Agent, active: boolean): boolean {
  const service = planMode(ctx, 'active')
  if (active) service.enter(agent.session, 'client:sdk')
  else service.exit(agent.session, 'client:sdk')
  return service.active(agent.session)
}
