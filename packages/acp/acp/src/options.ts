import type { SessionConfigOption, SessionConfigSelectGroup, SessionModeState } from '@agentclientprotocol/sdk'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/credentials'
import type { ModelInfo, Route } from '@dsh/llm'
import type { PermissionPresets } from '@dsh/permission-presets'
import type PlanMode from '@dsh/plan-mode'
import type {} from '@dsh/agent-presets'
import type { Session } from '@dsh/session'
import { AcpError } from './errors.ts'

/** The config option ids dsh offers (ACP "session config options"). */
export const MODE_OPTION = 'mode'
export const MODEL_OPTION = 'model'
/** The agent preset (tools offered; not a permission preset): settable until the session's first turn. */
export const AGENT_PRESET_OPTION = 'agent_preset'

/** The permission presets (`ctx.permissionPresets`), when a row mounts them. */
export type PresetSource = PermissionPresets

export const routeValue = (route: Route) => `${route.provider}/${route.model}`

/** The session mode that is plan mode (offered next to the presets when a plan-mode row is mounted). */
export const PLAN_MODE_ID = 'plan'
const PLAN_MODE = {
  id: PLAN_MODE_ID,
  name: PLAN_MODE_ID,
  description: "Read only: writes, edits and commands are refused until you approve the agent's plan.",
}

/** The preset a session is under (plan mode aside). */
export function presetMode(presets: PresetSource, session: Session): string {
  const list = presets.list()
  const state = presets.current(session)
  // A mode and policy changed apart from any preset are shown as the preset with the same sandbox mode.
  return state.preset ?? list.find((preset) => preset.mode === state.mode)?.name ?? list[0]!.name
}

/** Session modes are the permission presets (each a sandbox mode plus an approval policy), and plan mode. */
export function modeState(
  presets: PresetSource | undefined,
  session: Session,
  planMode?: PlanMode,
): SessionModeState | undefined {
  if (!presets) return undefined
  const modes = presets.list().map((preset) => ({
    id: preset.name,
    name: preset.name,
    ...(preset.description ? { description: preset.description } : {}),
  }))
  return {
    currentModeId: planMode?.active(session) ? PLAN_MODE_ID : presetMode(presets, session),
    availableModes: planMode ? [...modes, PLAN_MODE] : modes,
  }
}

/** Plan mode is entered over the preset in force; choosing a preset leaves plan mode (the editor's user chose it). */
export function setMode(
  presets: PresetSource | undefined,
  session: Session,
  modeId: string,
  planMode?: PlanMode,
): void {
  if (!presets)
    throw new AcpError('MODES_UNAVAILABLE', 'this dsh has no permission presets mounted, so it has no session modes')
  if (planMode && modeId === PLAN_MODE_ID) return planMode.enter(session, 'client:acp')
  const names: string[] = [...presets.list().map((preset) => preset.name), ...(planMode ? [PLAN_MODE_ID] : [])]
  if (!names.includes(modeId))
    throw new AcpError('MODE_UNKNOWN', `unknown mode "${modeId}" (modes: ${names.join(', ')})`)
  planMode?.exit(session, 'client:acp')
  presets.set(session, modeId, 'client:acp')
}

/** Chooses the session's agent preset (the editor's user did); refused by name once a turn has run. */
export function setAgentPreset(ctx: Context, session: Session, name: string): void {
  const agentPresets = ctx.get('agentPresets')
  if (!agentPresets) throw new AcpError('CONFIG_UNKNOWN', 'this dsh has no agent presets mounted')
  try {
    agentPresets.choose(session, name, 'client:acp')
  } catch (error) {
    const code =
      error instanceof Error && 'code' in error && error.code === 'AGENT_PRESET_TOO_LATE'
        ? 'AGENT_PRESET_TOO_LATE'
        : 'AGENT_PRESET_UNKNOWN'
    throw new AcpError(code, error instanceof Error ? error.message : String(error))
  }
}

/** The models each usable provider offers (a provider whose key is missing offers none). */
export type ModelCatalog = (provider: string) => Promise<ModelInfo[]>

/**
 * Builds a catalog that asks each adapter once per connection (a discovering adapter may call its server),
 * and not at all while the provider's key (`authKeys`) is missing.
 */
export function modelCatalog(ctx: Context, authKeys: Record<string, string>): ModelCatalog {
  const known = new Map<string, Promise<ModelInfo[]>>()
  return (provider) => {
    let models = known.get(provider)
    if (!models) {
      models = (async () => {
        const key = authKeys[provider]
        if (key && !(await ctx.credentials.describe(key)).set) return []
        return [...(await ctx.llm.adapter(provider).models())]
      })().catch(() => [])
      known.set(provider, models)
    }
    return models
  }
}

/** Every model of every usable provider, grouped by provider; the route in force is listed even if no catalog names it. */
async function modelGroups(ctx: Context, catalog: ModelCatalog, current: Route): Promise<SessionConfigSelectGroup[]> {
  const groups: SessionConfigSelectGroup[] = []
  for (const provider of ctx.llm.providers()) {
    const models = await catalog(provider)
    if (models.length)
      groups.push({
        group: provider,
        name: provider,
        options: models.map((model) => ({ value: `${provider}/${model.id}`, name: model.id })),
      })
  }
  const listed = groups.some((group) => group.options.some((option) => option.value === routeValue(current)))
  if (!listed) {
    const group = groups.find((g) => g.group === current.provider)
    const option = { value: routeValue(current), name: current.model }
    if (group) group.options.push(option)
    else groups.push({ group: current.provider, name: current.provider, options: [option] })
  }
  return groups
}

/** The session's config options: its permission preset (when presets are mounted) and its model route. */
export async function configOptions(
  ctx: Context,
  catalog: ModelCatalog,
  presets: PresetSource | undefined,
  session: Session,
  route: Route,
): Promise<SessionConfigOption[]> {
  const options: SessionConfigOption[] = []
  const modes = modeState(presets, session, ctx.get('planMode'))
  if (modes) {
    options.push({
      type: 'select',
      id: MODE_OPTION,
      name: 'Permissions',
      category: 'mode',
      description: 'How much the agent may do without asking: a sandbox mode and an approval policy.',
      currentValue: modes.currentModeId,
      options: modes.availableModes.map((mode) => ({
        value: mode.id,
        name: mode.name,
        ...(mode.description ? { description: mode.description } : {}),
      })),
    })
  }
  options.push({
    type: 'select',
    id: MODEL_OPTION,
    name: 'Model',
    category: 'model',
    currentValue: routeValue(route),
    options: await modelGroups(ctx, catalog, route),
  })
  const agentPresets = ctx.get('agentPresets')
  if (agentPresets) {
    options.push({
      type: 'select',
      id: AGENT_PRESET_OPTION,
      name: 'Agent preset',
      category: 'agent_preset',
      description:
        'Which tools the agent is offered (standard: all; explore: reading only; minimal: bash and the editor). Chosen before the first prompt.',
      currentValue: agentPresets.current(session)?.name ?? 'standard',
      options: agentPresets.list().map((preset) => ({
        value: preset.name,
        name: preset.name,
        ...(preset.description ? { description: preset.description } : {}),
      })),
    })
  }
  return options
}

/** The route a model option value names, checked against what is mounted. */
export async function routeFor(ctx: Context, catalog: ModelCatalog, value: string, current: Route): Promise<Route> {
  const slash = value.indexOf('/')
  const provider = slash > 0 ? value.slice(0, slash) : ''
  const model = slash > 0 ? value.slice(slash + 1) : ''
  const groups = await modelGroups(ctx, catalog, current)
  if (!groups.some((group) => group.options.some((option) => option.value === value)) || !provider || !model) {
    const known = groups.flatMap((group) => group.options.map((option) => option.value))
    throw new AcpError('MODEL_UNKNOWN', `unknown model "${value}" (models: ${known.join(', ') || 'none'})`)
  }
  // Effort is per model: keep it only when staying on the same model.
  return provider === current.provider && model === current.model ? current : { provider, model }
}
