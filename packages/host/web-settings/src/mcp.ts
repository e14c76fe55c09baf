import type { Context } from '@dsh/cordis'
import type {} from '@dsh/agent'
import type {} from '@dsh/mcp'
import type { McpServerView } from '@dsh/web-protocol'
import { WebError } from '@dsh/webserver'

/**
 * The MCP servers of a workspace for the settings page: the configured ones (user file, `.mcp.json`) or, with
 * a session open here, that session's (attached ones too), each with the state and tools its log records
 * (`mcp/status`, `mcp/catalog`). Names, origins and states only: never a command line, an env or header value.
 */
export async function mcpServers(ctx: Context, cwd: string, sessionId: string | undefined): Promise<McpServerView[]> {
  const mcp = ctx.get('mcp')
  if (!mcp) return []
  // The openable folders' check, as sessions.create and files.list make it, before its .mcp.json is read.
  const workspace = await ctx.webserver.folders.workspace(cwd)
  const session = sessionId ? ctx.get('agents')?.bySession(sessionId)?.session : undefined
  if (sessionId && !session) throw new WebError('NOT_FOUND', `no session ${sessionId} is open in this process`)
  const servers = session ? await mcp.servers(session) : await mcp.configured(workspace)
  return servers.map((server) => {
    const status = session?.all('mcp/status').findLast((event) => event.data.server === server.name)?.data
    const catalog = session?.all('mcp/catalog').findLast((event) => event.data.server === server.name)?.data
    return {
      name: server.name,
      origin: server.origin,
      source: server.source,
      transport: server.transport,
      trust: server.trust,
      state: status?.state ?? 'not started',
      ...(status?.message ? { message: status.message } : {}),
      tools: (catalog?.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description })),
    }
  })
}
