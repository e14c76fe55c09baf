import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { McpError, type McpRemoteServer } from '@dsh/mcp'
import { expandVariables } from './config.ts'

/**
 * The headers a remote server gets, resolved when connecting and held only by the transport: `${VAR}`
 * expanded from dsh's environment (not for an editor's values), and `Authorization: Bearer` from the
 * variable `bearer_token_env_var` names. Nothing here is logged: events carry the server's name only.
 */
export function remoteHeaders(server: McpRemoteServer, environment: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const literal = server.origin === 'acp'
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(server.headers)) headers[name] = literal ? value : expandVariables(value, environment, `${server.source}: MCP server "${server.name}": header ${name}`)
  if (server.bearerTokenEnvVar) {
    const token = environment[server.bearerTokenEnvVar]
    if (!token) throw new McpError('MCP_CONFIG_INVALID', `${server.source}: MCP server "${server.name}": bearer_token_env_var names ${server.bearerTokenEnvVar}, which is not set`)
    headers.Authorization = `Bearer ${token}`
  }
  return headers
}

/** Streamable HTTP (`http`) or the legacy HTTP+SSE transport (`sse`), with the resolved headers on every request. */
export function openRemote(server: McpRemoteServer, environment: Readonly<Record<string, string | undefined>>): { transport: Transport; diagnostics: () => string } {
  const requestInit = { headers: remoteHeaders(server, environment) }
  const url = new URL(server.url)
  const transport = server.transport === 'sse' ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit })
  return { transport, diagnostics: () => '' }
}
