import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { UsageError } from '@dsh/cmdline'
import type { Context } from '@dsh/cordis'
import type { McpServerConfig } from '@dsh/mcp'
import { parse } from 'yaml'

/**
 * `--mcp-config <file>`: MCP servers for this run's session, in the `mcpServers` shape (JSON as Claude Code's
 * `--mcp-config` takes it, or YAML), read and checked before any session is opened. A bad file is a usage
 * error (exit 2) naming it, the server and the key.
 */
export function readMcpConfig(ctx: Context, file: string | undefined): McpServerConfig[] {
  if (file === undefined) return []
  const mcp = ctx.get('mcp')
  if (!mcp) throw new UsageError(`--mcp-config ${file}: this profile mounts no MCP client (row "mcp")`)
  const path = resolve(ctx.app.cwd, file)
  let document: unknown
  try {
    document = parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new UsageError(`--mcp-config ${path}: ${(error as Error).message}`)
  }
  const servers =
    document && typeof document === 'object' && 'mcpServers' in document
      ? (document as { mcpServers: unknown }).mcpServers
      : undefined
  if (servers === undefined) throw new UsageError(`--mcp-config ${path}: expected an object with "mcpServers"`)
  try {
    return mcp.parse(servers, 'cli', path)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}
