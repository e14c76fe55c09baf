// What an agent preset is and how its tool patterns match (pure; docs/architecture.md, "Agent presets").

/** Which tools a preset offers: `allow` (when given) lists every tool offered, `deny` removes some. */
export interface ToolPatterns {
  /** Tool names; a trailing `*` matches a prefix (`mcp__*`). Absent: every tool the profile mounts. */
  allow?: string[]
  deny?: string[]
}

/** A plugin mounted for the agent alone (in its scope): its tools and prompt sections are the agent's own. */
export interface PresetPlugin {
  /** An installed package listed in the agent-presets row's `mountable` (and declaring `mountsPerAgent`). */
  name: string
  /** The plugin's config, checked against its schema when the preset is read. */
  config?: Record<string, unknown>
}

/** A capability set chosen when a session is created (not a permission preset: it grants nothing). */
export interface AgentPreset {
  name: string
  description: string
  tools: ToolPatterns
  /** Whether the session's history is compacted (and its old results pruned) when it grows. */
  compaction: boolean
  /** Plugins mounted for this agent only (absent in logs written before they existed: none). */
  plugins?: PresetPlugin[]
}

/** The preset as a session logs it: the whole definition, so resume needs no file, and where it came from. */
export interface ChosenAgentPreset extends AgentPreset {
  /** `built-in`, or the user's preset file it was read from. */
  source: string
}

export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/

export const BUILT_IN_AGENT_PRESETS: AgentPreset[] = [
  { name: 'standard', description: 'Every tool the profile mounts.', tools: {}, compaction: true },
  {
    name: 'explore',
    description: 'Read-only: reading and searching tools only; no write, edit, bash or subagents.',
    tools: { allow: ['read', 'glob', 'grep', 'todo_write', 'skill', 'history_read', 'job_output', 'job_list'] },
    compaction: true,
  },
  {
    name: 'minimal',
    description: 'A persistent bash and str_replace_editor only, no compaction (the two-tool runtime).',
    tools: { allow: ['bash', 'str_replace_editor'] },
    compaction: false,
    plugins: [{ name: '@dsh/tool-bash-persistent' }],
  },
]

const matches = (pattern: string, name: string) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name)

/** Whether a preset's patterns offer the tool `name`. */
export function offersTool(tools: ToolPatterns, name: string): boolean {
  if (tools.allow && !tools.allow.some((pattern) => matches(pattern, name))) return false
  return !tools.deny?.some((pattern) => matches(pattern, name))
}

const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/

const isMapping = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A validator message for a preset's `plugins`, or undefined. */
function pluginsProblem(plugins: unknown): string | undefined {
  if (plugins === undefined) return undefined
  if (!Array.isArray(plugins)) return 'plugins must be a list of { name, config }'
  for (const [index, plugin] of plugins.entries()) {
    if (!isMapping(plugin)) return `plugins[${index}] must be a mapping { name, config }`
    for (const key of Object.keys(plugin)) if (key !== 'name' && key !== 'config') return `plugins[${index}].${key} is not a field (name, config)`
    if (typeof plugin.name !== 'string' || !PACKAGE_NAME.test(plugin.name)) return `plugins[${index}].name must be a package name`
    if (plugin.config !== undefined && !isMapping(plugin.config)) return `plugins[${index}].config must be a mapping`
  }
  return undefined
}

const stringList = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string' && item.length > 0)

/** A validator message for a preset definition (a logged one, or a user file's), or undefined. */
export function presetProblem(data: any): string | undefined {
  if (typeof data?.name !== 'string' || !NAME_PATTERN.test(data.name)) return `name must match ${NAME_PATTERN}`
  if (typeof data.description !== 'string') return 'description must be a string'
  if (typeof data.compaction !== 'boolean') return 'compaction must be a boolean'
  if (typeof data.tools !== 'object' || data.tools === null || Array.isArray(data.tools)) return 'tools must be a mapping'
  for (const key of Object.keys(data.tools)) if (key !== 'allow' && key !== 'deny') return `tools.${key} is not a field (allow, deny)`
  for (const key of ['allow', 'deny'] as const) if (data.tools[key] !== undefined && !stringList(data.tools[key])) return `tools.${key} must be a list of tool names`
  return pluginsProblem(data.plugins)
}

/** The preset as plain JSON (a config default may carry absent lists as `undefined`, which a log refuses). */
export function plainPreset<T extends AgentPreset>(preset: T): T {
  const { allow, deny } = preset.tools
  const { plugins, ...rest } = preset
  const plain = { ...rest, tools: { ...(allow ? { allow: [...allow] } : {}), ...(deny ? { deny: [...deny] } : {}) } } as T
  if (plugins?.length) plain.plugins = plugins.map((plugin) => ({ name: plugin.name, ...(plugin.config !== undefined ? { config: plugin.config } : {}) }))
  return plain
}
