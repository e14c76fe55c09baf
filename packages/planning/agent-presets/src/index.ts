// Agent presets (docs/architecture.md, "Agent presets"): per-session capability sets, not permission presets.
import { join } from 'node:path'
import { type Context, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/app'
import { actorProblem, assertActor, type AuthorityActor } from '@dsh/authority-rules'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/tools'
import { BUILT_IN_AGENT_PRESETS, offersTool, plainPreset, presetProblem, type AgentPreset, type ChosenAgentPreset } from './presets.ts'
import { readUserPresets } from './user-presets.ts'

export { BUILT_IN_AGENT_PRESETS, offersTool, type AgentPreset, type ChosenAgentPreset, type ToolPatterns } from './presets.ts'
export { AgentPresetFileError, parsePresetFile } from './user-presets.ts'

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The agent preset a session was created with: the whole definition, so resume needs no file. */
    'agent/preset': ChosenAgentPreset & { actor: AuthorityActor }
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
}

// An absent list means "every tool" (allow) or "none removed" (deny), so it must stay absent, not become [].
const toolNames = Schema.union([Schema.array(Schema.string()), Schema.const(undefined)]) as unknown as Schema<string[] | undefined>

const PresetSchema: Schema<AgentPreset> = Schema.object({
  name: Schema.string().required(),
  description: Schema.string().default(''),
  tools: Schema.object({ allow: toolNames, deny: toolNames }).default({ allow: undefined, deny: undefined }),
  compaction: Schema.boolean().default(true),
}) as Schema<AgentPreset>

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  builtIns: Schema.array(PresetSchema).default(BUILT_IN_AGENT_PRESETS).description('The agent presets every user has (a user file of the same name replaces one).'),
  folder: Schema.string().default('presets').description('Folder of user agent presets (`<name>.yaml`), relative to $DSH_HOME.'),
})

/**
 * Agent presets (DESIGN §6). Owns: the presets (built-in and `$DSH_HOME/presets/*.yaml`), the `agent/preset`
 * kind and what it narrows per agent: the tools its requests carry and run (a `ctx.tools` filter, so a hidden
 * tool is unknown when called) and whether its history is compacted. Must not own: authority (permission
 * presets and the sandbox mode decide what an offered tool may do) or which rows the profile mounts.
 */
export class AgentPresets extends Service {
  static inject = ['sessions', 'tools', 'agents', 'app']
  static Config = Config

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
    ctx.sessions.defineKind(ctx, 'agent/preset', { validate: (data) => presetProblem(data) ?? (typeof data.source === 'string' ? actorProblem(data.actor) : 'source must be a string') })
    ctx.tools.useFilter(ctx, (agentId, name) => this.offers(ctx.agents.get(agentId), name))
  }

  /** Built-ins, then the user's files (a file replaces a built-in of its name). A bad file throws naming file and line. */
  list(): ChosenAgentPreset[] {
    const byName = new Map<string, ChosenAgentPreset>(this.config.builtIns.map((preset) => [preset.name, plainPreset({ ...preset, source: 'built-in' })]))
    for (const preset of readUserPresets(join(this.ctx.app.home, this.config.folder))) byName.set(preset.name, plainPreset(preset))
    return [...byName.values()]
  }

  get(name: string): ChosenAgentPreset {
    const presets = this.list()
    const found = presets.find((preset) => preset.name === name)
    if (!found) throw new AgentPresetError('UNKNOWN_AGENT_PRESET', `there is no agent preset "${name}" (known: ${presets.map((preset) => preset.name).join(', ')})`)
    return found
  }

  /** Logs the preset of a new session, before its first turn; a session that chose none is `standard`. */
  choose(session: Session, name: string, actor: AuthorityActor): ChosenAgentPreset {
    assertActor(actor, 'agentPresets.choose')
    const preset = this.get(name)
    if (session.last('turn/start')) throw new AgentPresetError('AGENT_PRESET_TOO_LATE', `session ${session.id} has already run a turn: an agent preset is chosen when a session is created`)
    session.append('agent/preset', { ...preset, actor })
    return preset
  }

  /** The preset in force: the session's logged one, else none (every tool). */
  current(session: Session): ChosenAgentPreset | undefined {
    const data = session.last('agent/preset')?.data
    return data && { name: data.name, description: data.description, tools: data.tools, compaction: data.compaction, source: data.source }
  }

  /** Whether the session's history may be compacted. */
  compacts(session: Session): boolean {
    return this.current(session)?.compaction !== false
  }

  /** A subagent is narrowed by its own preset and every ancestor's (it cannot offer what its parent lacks). */
  private offers(agent: Agent | undefined, name: string): boolean {
    for (let at = agent; at; at = at.parent) {
      const preset = this.current(at.session)
      if (preset && !offersTool(preset.tools, name)) return false
    }
    return true
  }
}

export default AgentPresets
