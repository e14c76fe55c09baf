import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import type { CommandDefinition } from '@dsh/commands'
import { MEMORY_SCOPES, type MemoryFile, type MemoryScope } from '@dsh/memory'
import { memoryLimits } from './settings.ts'

const USAGE =
  'usage: /memory [show] | /memory add <user|workspace> <text> | /memory edit <user|workspace> <n> <text> | /memory delete <user|workspace> <n>'

class MemoryCommandError extends Error {
  readonly code = 'MEMORY_USAGE'
}

function render(file: MemoryFile, maxBytes: number): string {
  const title = `${file.scope} memory — ${file.path}${file.workspace ? ` (workspace ${file.workspace})` : ''}, ${file.bytes} of ${maxBytes} bytes`
  const lines = file.entries.length
    ? file.entries.map((entry, index) => `  ${index + 1}. ${entry}`)
    : ['  (no entries)']
  return [title, ...lines].join('\n')
}

function scopeOf(word: string | undefined): MemoryScope {
  if (word && (MEMORY_SCOPES as readonly string[]).includes(word)) return word as MemoryScope
  throw new MemoryCommandError(`/memory: name the memory, user or workspace (got "${word ?? ''}"); ${USAGE}`)
}

function numberOf(word: string | undefined): number {
  if (word && /^[1-9][0-9]*$/.test(word)) return Number(word)
  throw new MemoryCommandError(
    `/memory: name the entry by its number, as /memory lists it (got "${word ?? ''}"); ${USAGE}`,
  )
}

/**
 * `/memory`: a person views, adds, edits (by entry number: no surface needs an editor) and deletes entries of
 * the user's and the agent's workspace memory. Each change is logged as `memory/changed` in the agent's
 * session; the model reads the files as they are at the start of its next new session.
 */
export function memoryCommand(ctx: Context): CommandDefinition {
  const changed = (
    agent: Agent,
    file: MemoryFile,
    change: 'added' | 'edited' | 'deleted',
    entry: number,
    text: string,
  ) => agent.session.append('memory/changed', { scope: file.scope, path: file.path, change, entry, text })
  return {
    name: 'memory',
    description: "View and change the user's and this workspace's memory, read by every new session.",
    argumentHint: '[show | add <scope> <text> | edit <scope> <n> <text> | delete <scope> <n>]',
    async run(args, { agent }) {
      const [verb = 'show', ...rest] = args.split(/\s+/).filter(Boolean)
      const limits = memoryLimits(ctx)
      if (verb === 'show') {
        const files = await Promise.all(MEMORY_SCOPES.map((scope) => ctx.memory.read(scope, agent.cwd)))
        return `${files.map((file) => render(file, limits.maxBytes)).join('\n')}\nNew proposals: ${ctx.settings.get('memory.accept') === 'auto' ? 'accepted automatically (memory.accept: auto)' : 'a person accepts each (memory.accept: ask)'}.`
      }
      const scope = scopeOf(rest[0])
      if (verb === 'add') {
        const file = await ctx.memory.append(scope, agent.cwd, rest.slice(1).join(' '), limits)
        changed(agent, file, 'added', file.entries.length, file.entries.at(-1)!)
        return `Added ${scope} entry ${file.entries.length}.\n${render(file, limits.maxBytes)}`
      }
      if (verb === 'edit') {
        const entry = numberOf(rest[1])
        const file = await ctx.memory.replace(scope, agent.cwd, entry, rest.slice(2).join(' '), limits)
        changed(agent, file, 'edited', entry, file.entries[entry - 1]!)
        return `Changed ${scope} entry ${entry}.\n${render(file, limits.maxBytes)}`
      }
      if (verb === 'delete') {
        const entry = numberOf(rest[1])
        const before = await ctx.memory.read(scope, agent.cwd)
        const file = await ctx.memory.remove(scope, agent.cwd, entry)
        changed(agent, file, 'deleted', entry, before.entries[entry - 1] ?? '')
        return `Deleted ${scope} entry ${entry}.\n${render(file, limits.maxBytes)}`
      }
      throw new MemoryCommandError(`/memory: unknown action "${verb}"; ${USAGE}`)
    },
  }
}
