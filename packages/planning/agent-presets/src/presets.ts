// What an agent preset is and how its tool patterns match (pure; docs/architecture.md, "Agent presets").
import { AUTHORITY_ACTORS } from '@dsh/authority-rules'
import { checkShape, oneOf, Type, type Static } from '@dsh/session'

export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/

// A preset's fields are one TypeBox schema (issue #28.6): the type of a preset, the check of a built-in or a
// user's file (`presetProblem`), and with `source` and `actor` the `agent/preset` kind's type and check.
const toolNames = Type.Array(Type.String({ minLength: 1 }))

/** Which tools a preset offers: `allow` (when given) lists every tool offered, `deny` removes some. */
const ToolPatternsData = Type.Object(
  {
    /** Tool names; a trailing `*` matches a prefix (`mcp__*`). Absent: every tool the profile mounts. */
    allow: Type.Optional(toolNames),
    deny: Type.Optional(toolNames),
  },
  { additionalProperties: false, fieldIs: 'field of tools' },
)
export type ToolPatterns = Static<typeof ToolPatternsData>

/** A plugin mounted for the agent alone (in its scope): its tools and prompt sections are the agent's own. */
const PresetPluginData = Type.Object(
  {
    /** An installed package listed in the agent-presets row's `mountable` (and declaring `mountsPerAgent`). */
    name: Type.String({ pattern: PACKAGE_NAME.source, is: 'a package name' }),
    /** The plugin's config, checked against its schema when the preset is read. */
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false, fieldIs: 'field of a plugin' },
)
export type PresetPlugin = Static<typeof PresetPluginData>

const PresetFields = {
  name: Type.String({ pattern: NAME_PATTERN.source, is: `a preset name (${NAME_PATTERN})` }),
  description: Type.String(),
  tools: ToolPatternsData,
  /** Whether the session's history is compacted (and its old results pruned) when it grows. */
  compaction: Type.Boolean(),
  /** Plugins mounted for this agent only (absent in logs written before they existed: none). */
  plugins: Type.Optional(Type.Array(PresetPluginData)),
  /**
   * Code mode (docs/architecture.md, "Code mode"): the tools the model calls directly. Every other tool `tools`
   * offers is reached only from a `run_code` program. Absent: every offered tool is direct.
   */
  direct: Type.Optional(toolNames),
}
/** A capability set chosen when a session is created (not a permission preset: it grants nothing). */
const AgentPresetData = Type.Object(PresetFields)
export type AgentPreset = Static<typeof AgentPresetData>

/**
 * The preset as a session logs it: the whole definition, so resume needs no file, where it came from
 * (`built-in` or the user's preset file) and who chose it.
 */
export const AgentPresetEventData = Type.Object({
  ...PresetFields,
  source: Type.String(),
  actor: oneOf(AUTHORITY_ACTORS),
})
export type ChosenAgentPreset = AgentPreset & { source: string }

/** A validator message for a preset definition (a built-in or a user file's), or undefined. */
export const presetProblem = (data: unknown): string | undefined => checkShape(AgentPresetData, data, 'preset')

export const BUILT_IN_AGENT_PRESETS: AgentPreset[] = [
  { name: 'standard', description: 'Every tool the profile mounts.', tools: {}, compaction: true },
  {
    name: 'explore',
    description: 'Read-only: reading and searching tools only; no write, edit, bash or subagents.',
    tools: { allow: ['read', 'glob', 'grep', 'lsp', 'todo_write', 'skill', 'history_read', 'job_output', 'job_list'] },
    compaction: true,
  },
  {
    name: 'minimal',
    description: 'A persistent bash and str_replace_editor only, no compaction (the two-tool runtime).',
    tools: { allow: ['bash', 'str_replace_editor'] },
    compaction: false,
    plugins: [{ name: '@dsh/tool-bash-persistent' }],
  },
  {
    name: 'code',
    description:
      'Standard, with the tools reached from run_code programs; todo_write, skill, task and exit_plan_mode stay direct.',
    tools: {},
    compaction: true,
    plugins: [{ name: '@dsh/tool-run-code' }],
    // Direct: tools whose result is for the conversation, not data for a program (the visible plan, a skill's
    // instructions, a subagent's report, leaving plan mode).
    direct: ['run_code', 'todo_write', 'skill', 'task', 'exit_plan_mode'],
  },
]

const matches = (pattern: string, name: string) =>
  pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name

/** Whether a preset's patterns offer the tool `name`. */
export function offersTool(tools: ToolPatterns, name: string): boolean {
  if (tools.allow && !tools.allow.some((pattern) => matches(pattern, name))) return false
  return !tools.deny?.some((pattern) => matches(pattern, name))
}

/**
 * Whether the preset offers `name` reached `reach`: the model calls only the `direct` tools of a code-mode
 * preset, and a program any offered tool but `run_code` (a program does not start programs).
 */
export function offersToolBy(preset: Pick<AgentPreset, 'tools' | 'direct'>, name: string, reach: 'direct' | 'program') {
  if (!offersTool(preset.tools, name)) return false
  if (reach === 'program') return name !== 'run_code'
  return !preset.direct || preset.direct.some((pattern) => matches(pattern, name))
}

/** The preset as plain JSON (a config default may carry absent lists as `undefined`, which a log refuses). */
export function plainPreset<T extends AgentPreset>(preset: T): T {
  const { allow, deny } = preset.tools
  const { plugins, direct, ...rest } = preset
  const plain = {
    ...rest,
    tools: { ...(allow ? { allow: [...allow] } : {}), ...(deny ? { deny: [...deny] } : {}) },
  } as T
  if (direct) plain.direct = [...direct]
  if (plugins?.length)
    plain.plugins = plugins.map((plugin) => ({
      name: plugin.name,
      ...(plugin.config !== undefined ? { config: plugin.config } : {}),
    }))
  return plain
}
