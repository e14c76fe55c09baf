import type { CommandDefinition } from '@dsh/commands'
import type { Mcp } from '@dsh/mcp'

/**
 * `/mcp`: the session's MCP servers, where each comes from, its state and tool count as the log records
 * them (`mcp/status`, `mcp/catalog`). Only names, origins and states: never a command line, an env value
 * or a header, which may hold secrets.
 */
export function mcpCommand(mcp: Mcp): CommandDefinition {
  return {
    name: 'mcp',
    description: "List this session's MCP servers: where each comes from, its state and its tools.",
    async run(_args, { agent }) {
      const servers = await mcp.servers(agent.session)
      if (!servers.length)
        return 'No MCP servers: add them to $DSH_HOME/mcp.yaml or the workspace .mcp.json (see dsh mcp list).'
      const lines = servers.map((server) => {
        const status = agent.session.all('mcp/status').findLast((event) => event.data.server === server.name)?.data
        const catalog = agent.session.all('mcp/catalog').findLast((event) => event.data.server === server.name)?.data
        const state = status ? `${status.state}${status.message ? ` (${status.message})` : ''}` : 'not started yet'
        const tools = catalog ? `, ${catalog.tools.length} tool${catalog.tools.length === 1 ? '' : 's'}` : ''
        return `${server.name} — ${server.origin}, ${server.transport}, trust ${server.trust}: ${state}${tools}`
      })
      return lines.join('\n')
    },
  }
}
