import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SANDBOX_MODES, type SandboxMode } from '@dsh/sandbox'
import type { AgentType } from '@dsh/subagent'
import { parse } from 'yaml'

/** The types every workspace has. `explore` reads only: its tools change nothing and its ceiling is read-only. */
export const BUILT_IN_TYPES: AgentType[] = [
  {
    name: 'general',
    description:
      'A general agent with the same tools as its parent, for a self-contained task (research, a change in several files).',
    instructions: '',
    source: 'built-in',
  },
  {
    name: 'explore',
    description:
      'A read-only agent that searches and reads the workspace and reports what it found (it cannot change anything).',
    tools: ['read', 'glob', 'grep', 'lsp'],
    ceiling: 'read-only',
    instructions:
      'You explore the workspace read-only: search, read, and report your findings concisely, naming files and lines.',
    source: 'built-in',
  },
]

/** A malformed agent file, named by path (fail loud: a typo must not silently widen or drop a type). */
export class AgentTypeError extends Error {
  override name = 'AgentTypeError'
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/

function listOf(value: unknown, file: string): string[] | undefined {
  if (value === undefined || value === null) return undefined
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined
  if (!items || items.some((item) => typeof item !== 'string'))
    throw new AgentTypeError(`${file}: tools must be a list of tool names or a comma-separated string`)
  return items.map((item) => item.trim()).filter(Boolean)
}

/** One `.md` agent file: YAML front matter (`name`, `description`, `tools`, `model`, `ceiling`), then instructions. */
export function parseAgentFile(text: string, file: string): AgentType {
  const match = FRONT_MATTER.exec(text)
  if (!match) throw new AgentTypeError(`${file}: an agent file starts with YAML front matter between --- lines`)
  let meta: Record<string, unknown>
  try {
    meta = parse(match[1]!) ?? {}
  } catch (error) {
    throw new AgentTypeError(`${file}: front matter is not YAML (${error instanceof Error ? error.message : error})`)
  }
  if (typeof meta.name !== 'string' || !/^[\w.-]+$/.test(meta.name))
    throw new AgentTypeError(`${file}: name must be a word (letters, digits, . _ -)`)
  if (typeof meta.description !== 'string' || !meta.description.trim())
    throw new AgentTypeError(`${file}: description must be a non-empty string`)
  if (meta.model !== undefined && typeof meta.model !== 'string')
    throw new AgentTypeError(`${file}: model must be a string`)
  if (meta.ceiling !== undefined && !SANDBOX_MODES.includes(meta.ceiling as SandboxMode))
    throw new AgentTypeError(`${file}: ceiling must be one of ${SANDBOX_MODES.join(', ')}`)
  const tools = listOf(meta.tools, file)
  // Claude Code writes `model: inherit` for "the parent's model".
  const model = meta.model && meta.model !== 'inherit' ? meta.model : undefined
  return {
    name: meta.name,
    description: meta.description.trim(),
    ...(tools ? { tools } : {}),
    ...(model ? { model } : {}),
    ...(meta.ceiling ? { ceiling: meta.ceiling as SandboxMode } : {}),
    instructions: match[2]!.trim(),
    source: file,
  }
}

async function filesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith('.md')).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return []
    throw error
  }
}

/**
 * The agent types of a workspace: the built-ins, then `.claude/agents/*.md`, then `.dsh/agents/*.md` (a later
 * definition of a name replaces an earlier one, so dsh's own folder wins).
 */
export async function loadAgentTypes(cwd: string, folders: string[]): Promise<AgentType[]> {
  const byName = new Map(BUILT_IN_TYPES.map((type) => [type.name, type]))
  for (const folder of folders) {
    const dir = join(cwd, folder)
    for (const name of await filesIn(dir)) {
      const file = join(dir, name)
      const type = parseAgentFile(await readFile(file, 'utf8'), file)
      byName.set(type.name, type)
    }
  }
  return [...byName.values()]
}
