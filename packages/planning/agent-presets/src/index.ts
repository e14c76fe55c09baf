// Agent presets (docs/architecture.md, "Agent presets"): per-session capability sets, not permission presets.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { type Context, FIBER_STATE, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/app'
import { assertActor, type AuthorityActor } from '@dsh/authority-rules'
import Schema from '@dsh/schemastery'
import type { Route, ToolSchema } from '@dsh/llm'
import type { Session, Static } from '@dsh/session'
import type { RenderedSection } from '@dsh/system-prompt'
import type { ToolReach } from '@dsh/tools'
import { configProblem, mountForAgent, MOUNTS_PER_AGENT, type ResolvedPlugin } from './agent-mounts.ts'
import {
  AgentPresetEventData,
  BUILT_IN_AGENT_PRESETS,
  offersTool,
  offersToolBy,
  plainPreset,
  presetProblem,
  type AgentPreset,
  type ChosenAgentPreset,
  type PresetPlugin,
} from './presets.ts'
import { AgentPresetFileError, pluginLinesOf, readUserPresets } from './user-presets.ts'

export {
  BUILT_IN_AGENT_PRESETS,
  offersTool,
  offersToolBy,
  type AgentPreset,
  type ChosenAgentPreset,
  type PresetPlugin,
  type ToolPatterns,
} from './presets.ts'
export { AgentPresetFileError, parsePresetFile } from './user-presets.ts'
export { MOUNTS_PER_AGENT } from './agent-mounts.ts'

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The agent preset a session was created with: the whole definition, so resume needs no file. */
    'agent/preset': Static<typeof AgentPresetEventData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    agentPresets: AgentPresets
  }
}

/** A preset nobody defined, or one chosen too late. */
export class AgentPresetError extends Error {
  override name = 'AgentPresetError'
  constructor(
    readonly code: 'UNKNOWN_AGENT_PRESET' | 'AGENT_PRESET_TOO_LATE',
    message: string,
  ) {
    super(message)
  }
}

export interface Config {
  builtIns: AgentPreset[]
  folder: string
  mountable: string[]
}

/** A preset's plugins being mounted for one agent: which `agent/preset` event, and how it went. */
interface AgentMount {
  seq: number
  fiber?: { dispose(): unknown }
  /** Resolves to why the plugins could not be mounted, or undefined once they are active. */
  ready: Promise<string | undefined>
}

// An absent list means "every tool" (allow) or "none removed" (deny), so it must stay absent, not become [].
const toolNames = Schema.union([Schema.array(Schema.string()), Schema.const(undefined)]) as unknown as Schema<
  string[] | undefined
>

const PresetSchema: Schema<AgentPreset> = Schema.object({
  name: Schema.string().required(),
  description: Schema.string().default(''),
  tools: Schema.object({ allow: toolNames, deny: toolNames }).default({ allow: undefined, deny: undefined }),
  compaction: Schema.boolean().default(true),
  plugins: Schema.array(Schema.object({ name: Schema.string().required(), config: Schema.dict(Schema.any()) })),
  direct: toolNames,
}) as Schema<AgentPreset>

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  builtIns: Schema.array(PresetSchema)
    .default(BUILT_IN_AGENT_PRESETS)
    .description('The agent presets every user has (a user file of the same name replaces one).'),
  folder: Schema.string()
    .default('presets')
    .description('Folder of user agent presets (`<name>.yaml`), relative to $DSH_HOME.'),
  mountable: Schema.array(Schema.string())
    .default(['@dsh/tool-bash-persistent', '@dsh/tool-run-code'])
    .description(
      `Packages a preset's \`plugins\` may mount for one agent; each must also declare \`${MOUNTS_PER_AGENT}\` (loaded at boot).`,
    ),
})

/**
 * Agent presets (docs/architecture.md, "Agents and the turn"). Owns: the presets (built-in and `$DSH_HOME/presets/*.yaml`), the `agent/preset`
 * kind and what it narrows per agent: the tools its requests carry and run (a `ctx.tools` filter, so a hidden
 * tool is unknown when called) and whether its history is compacted. Must not own: authority (permission
 * presets and the sandbox mode decide what an offered tool may do) or which rows the profile mounts.
 */
export class AgentPresets extends Service {
  static inject = ['sessions', 'tools', 'agents', 'app']
  static Config = Config

  /** The `mountable` packages' plugins, loaded at boot so a preset is checked whole when it is read. */
  private readonly mountable = new Map<string, unknown>()
  private readonly mounts = new Map<string, AgentMount>()

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'agentPresets')
    for (const preset of config.builtIns) {
      const problem = presetProblem(preset)
      if (problem) throw new Error(`agent-presets: built-in preset ${JSON.stringify(preset.name)}: ${problem}`)
    }
    // Not ignorable: a session made read-only must not be opened, and run with every tool, where nothing reads it.
    ctx.sessions.defineKind(ctx, 'agent/preset', { schema: AgentPresetEventData })
    ctx.tools.useFilter(ctx, (agentId, name, reach) => this.offers(ctx.agents.get(agentId), name, reach))
    // A resumed or forked session mounts what its logged preset names; a first step waits for the mount.
    ctx.on('agent/created', (agent) => this.syncMounts(agent))
    ctx.on('agent/status', (agent, status) => void (status === 'disposed' && this.mounts.delete(agent.id)))
    ctx.on('agent/pre-step', async (step, next) => {
      const problem = await this.mounts.get(step.agent.id)?.ready
      return problem ? { action: 'reject', reason: problem } : next()
    })
  }

  async [Service.init](): Promise<void> {
    for (const name of this.config.mountable) {
      const plugin = await this.ctx.app.resolvePlugin(name)
      if ((plugin as Record<string, unknown>)[MOUNTS_PER_AGENT] !== true) {
        throw new Error(
          `agent-presets: mountable "${name}" does not declare ${MOUNTS_PER_AGENT}: only a plugin made to live in one agent's scope can be mounted per agent`,
        )
      }
      this.mountable.set(name, plugin)
    }
    for (const preset of this.config.builtIns) {
      const problem = this.pluginsProblem(preset.plugins)
      if (problem) throw new Error(`agent-presets: built-in preset ${JSON.stringify(preset.name)}: ${problem.message}`)
    }
  }

  /** Built-ins, then the user's files (a file replaces a built-in of its name). A bad file throws naming file and line. */
  list(): ChosenAgentPreset[] {
    const byName = new Map<string, ChosenAgentPreset>(
      this.config.builtIns.map((preset) => [preset.name, plainPreset({ ...preset, source: 'built-in' })]),
    )
    for (const preset of readUserPresets(join(this.ctx.app.home, this.config.folder))) {
      const problem = this.pluginsProblem(preset.plugins)
      const line = problem && pluginLinesOf(preset)?.[problem.index]?.[problem.field]
      if (problem) throw new AgentPresetFileError(preset.source, line ?? 1, problem.message)
      byName.set(preset.name, plainPreset(preset))
    }
    return [...byName.values()]
  }

  get(name: string): ChosenAgentPreset {
    const presets = this.list()
    const found = presets.find((preset) => preset.name === name)
    if (!found)
      throw new AgentPresetError(
        'UNKNOWN_AGENT_PRESET',
        `there is no agent preset "${name}" (known: ${presets.map((preset) => preset.name).join(', ')})`,
      )
    return found
  }

  /** Logs the preset of a new session, before its first turn; a session that chose none is `standard`. */
  choose(session: Session, name: string, actor: AuthorityActor): ChosenAgentPreset {
    assertActor(actor, 'agentPresets.choose')
    const preset = this.get(name)
    if (session.last('turn/start'))
      throw new AgentPresetError(
        'AGENT_PRESET_TOO_LATE',
        `session ${session.id} has already run a turn: an agent preset is chosen when a session is created`,
      )
    session.append('agent/preset', { ...preset, actor })
    const agent = this.ctx.agents.bySession(session.id)
    if (agent) this.syncMounts(agent)
    return preset
  }

  /** The preset in force: the session's logged one, else none (every tool). */
  current(session: Session): ChosenAgentPreset | undefined {
    const data = session.last('agent/preset')?.data
    return (
      data && {
        name: data.name,
        description: data.description,
        tools: data.tools,
        compaction: data.compaction,
        source: data.source,
        ...(data.plugins ? { plugins: data.plugins } : {}),
        ...(data.direct ? { direct: data.direct } : {}),
      }
    )
  }

  /**
   * What a new agent of the preset `name` would be offered in `cwd` on `route` — its tools and its system prompt,
   * with the preset's plugins mounted for the moment under a preview id (`dsh prompt show --preset`).
   */
  async preview(
    name: string,
    where: { cwd: string; route: Route },
  ): Promise<{ tools: ToolSchema[]; prompt: { override?: string; sections: RenderedSection[] } }> {
    const preset = this.get(name)
    const agentId = `preview:${randomUUID()}` // two previews at once must not share registrations
    let scope: Context | undefined
    const fiber = this.ctx.plugin({ name: agentId, apply: (inner: Context) => void (scope = inner) })
    await fiber
    try {
      if (preset.plugins?.length) {
        const resolved = preset.plugins.map(({ name: plugin, config }) => ({
          name: plugin,
          plugin: this.mountable.get(plugin),
          config,
        }))
        await mountForAgent(scope!, agentId, preset.name, resolved)
      }
      const tools = this.ctx.tools.schemas(agentId).filter((tool) => offersToolBy(preset, tool.name, 'direct'))
      const prompt = await this.ctx
        .get('systemPrompt')
        ?.render({ ...where, agentId, tools: tools.map((tool) => tool.name) })
      return { tools, prompt: prompt ?? { sections: [] } }
    } finally {
      await fiber.dispose()
    }
  }

  /** Resolves once the agent's preset plugins are mounted (undefined), or to why they could not be. */
  mounted(agentId: string): Promise<string | undefined> {
    return this.mounts.get(agentId)?.ready ?? Promise.resolve(undefined)
  }

  /** The first of `plugins` that cannot be mounted per agent: which one, which field, and why. */
  private pluginsProblem(
    plugins: PresetPlugin[] = [],
  ): { index: number; field: 'name' | 'config'; message: string } | undefined {
    for (const [index, { name, config }] of plugins.entries()) {
      const plugin = this.mountable.get(name)
      if (!plugin)
        return {
          index,
          field: 'name',
          message: `plugin "${name}" cannot be mounted per agent (mountable: ${[...this.mountable.keys()].join(', ') || 'none'})`,
        }
      const problem = configProblem(plugin, config)
      if (problem) return { index, field: 'config', message: `plugins[${index}] (${name}): ${problem}` }
    }
    return undefined
  }

  /**
   * Mounts the plugins the agent's logged preset names (after unmounting those of a preset chosen before it),
   * in the agent's scope; a log naming one this process cannot mount leaves the agent unable to take a step.
   */
  private syncMounts(agent: Agent): void {
    const event = agent.session.last('agent/preset')
    const seq = event?.seq ?? -1
    const previous = this.mounts.get(agent.id)
    if ((previous?.seq ?? -1) === seq) return
    this.mounts.delete(agent.id)
    const plugins = event?.data.plugins ?? []
    if (!plugins.length && !previous) return
    const presetName = event?.data.name ?? 'standard'
    const problem = this.pluginsProblem(plugins)
    const mount: AgentMount = { seq, ready: Promise.resolve(undefined) }
    const unmounted = Promise.resolve(previous?.fiber?.dispose()).catch(() => {})
    mount.ready = unmounted.then(async () => {
      if (problem) return `agent preset "${presetName}": ${problem.message}`
      if (!plugins.length) return undefined
      const resolved: ResolvedPlugin[] = plugins.map(({ name, config }) => ({
        name,
        plugin: this.mountable.get(name),
        config,
      }))
      const fiber = mountForAgent(agent.scope, agent.id, presetName, resolved)
      mount.fiber = fiber
      try {
        await fiber
        return fiber.state === FIBER_STATE.ACTIVE
          ? undefined
          : `agent preset "${presetName}": its plugins did not start (a service they need is not mounted)`
      } catch (error) {
        return `agent preset "${presetName}": its plugins did not start: ${error instanceof Error ? error.message : String(error)}`
      }
    })
    this.mounts.set(agent.id, mount)
  }

  /** Whether the session's history may be compacted. */
  compacts(session: Session): boolean {
    return this.current(session)?.compaction !== false
  }

  /**
   * A subagent is narrowed by its own preset and every ancestor's (it cannot offer what its parent lacks); how a
   * tool is reached (directly or from a program, code mode) is the agent's own preset's to say, not its ancestors'.
   */
  private offers(agent: Agent | undefined, name: string, reach: ToolReach): boolean {
    for (let at = agent; at; at = at.parent) {
      const preset = this.current(at.session)
      if (preset && !(at === agent ? offersToolBy(preset, name, reach) : offersTool(preset.tools, name))) return false
    }
    return true
  }
}

export default AgentPresets
