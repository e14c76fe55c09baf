import { existsSync, realpathSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type { RuleSubject } from '@dsh/authority-rules'
import { MCP_RESOURCE_TOOL, MCP_RESOURCES_RULE_NAME, parseMcpToolName } from '@dsh/mcp'
import type { ToolInvocation } from '@dsh/tools'

/** The real path of `path`, through its deepest existing ancestor (a symlinked directory is followed). */
export function realPath(path: string): string {
  let existing = path
  const rest: string[] = []
  while (!existsSync(existing) && dirname(existing) !== existing) {
    rest.unshift(basename(existing))
    existing = dirname(existing)
  }
  try {
    return join(realpathSync(existing), ...rest)
  } catch {
    return path
  }
}

const pathSubject = (kind: 'write' | 'edit', path: unknown, cwd: string): RuleSubject | undefined =>
  typeof path === 'string' && path ? { kind, value: realPath(resolve(cwd, path)), cwd: realPath(cwd) } : undefined

/**
 * What a tool call does, as grant rules see it, for the tools dsh ships: `bash` (confined, `unconfined`
 * with `sandbox: false`, or `writegit` with `writeGit: true`), `write`, `edit` and `str_replace_editor` (its create is a write, its other changes
 * edits), MCP tools and `mcp_resource` (`mcp`). Undefined for any other tool or call: no rule applies to it, neither allow nor deny.
 */
export function subjectOf(invocation: ToolInvocation): RuleSubject | undefined {
  const args = (invocation.arguments ?? {}) as Record<string, unknown>
  const cwd = invocation.context.cwd
  switch (invocation.name) {
    case 'bash':
      return typeof args.command === 'string'
        ? {
            kind: args.sandbox === false ? 'unconfined' : args.writeGit === true ? 'writegit' : 'bash',
            value: args.command,
          }
        : undefined
    case 'write':
      return pathSubject('write', args.path, cwd)
    case 'edit':
      return pathSubject('edit', args.path, cwd)
    case 'str_replace_editor':
      if (args.command === 'create') return pathSubject('write', args.path, cwd)
      if (args.command === 'str_replace' || args.command === 'insert' || args.command === 'undo_edit')
        return pathSubject('edit', args.path, cwd)
      return undefined
    case MCP_RESOURCE_TOOL:
      // Listing or reading a server's resources: `mcp(<server>/@resources)`.
      return typeof args.server === 'string'
        ? { kind: 'mcp', value: `${args.server}/${MCP_RESOURCES_RULE_NAME}` }
        : undefined
    default: {
      // An MCP tool (`mcp__<server>__<tool>`): rules name it `mcp(<server>/<tool>)`.
      const mcp = parseMcpToolName(invocation.name)
      return mcp ? { kind: 'mcp', value: `${mcp.server}/${mcp.tool}` } : undefined
    }
  }
}
