import { resolve } from 'node:path'
import { CLAUDE_CODE_ALIASES, CLAUDE_CODE_TOOLS } from '@dsh/hooks'

// A Claude Code hook script reads `tool_name == "Bash"` and `.tool_input.file_path`: dsh shows it its own
// tools under those names, and reads an `updatedInput` back in dsh's names (docs/extending.md#hooks).

/** The names a matcher is tested on: the dsh name and the Claude Code names of the tool. */
export function matchNames(tool: string): string[] {
  const claude = CLAUDE_CODE_TOOLS[tool]?.name
  return [tool, ...(claude ? [claude] : []), ...(CLAUDE_CODE_ALIASES[tool] ?? [])]
}

function rename(args: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [names[key] ?? key, value]))
}

/** `tool_name` and `tool_input` as a Claude Code hook expects them (`file_path` absolute, as Claude Code's tools take it). */
export function toClaudeCode(tool: string, args: unknown, cwd: string): { tool_name: string; tool_input: unknown } {
  const known = CLAUDE_CODE_TOOLS[tool]
  if (!known || typeof args !== 'object' || args === null) return { tool_name: tool, tool_input: args }
  const input = rename(args as Record<string, unknown>, known.arguments)
  if (typeof input.file_path === 'string') input.file_path = resolve(cwd, input.file_path)
  return { tool_name: known.name, tool_input: input }
}

/** A hook's `updatedInput` in dsh's argument names (the whole input: Claude Code replaces it, it does not merge). */
export function fromClaudeCode(tool: string, input: Record<string, unknown>): Record<string, unknown> {
  const known = CLAUDE_CODE_TOOLS[tool]
  if (!known) return input
  const back = Object.fromEntries(Object.entries(known.arguments).map(([ours, theirs]) => [theirs, ours]))
  return rename(input, back)
}
