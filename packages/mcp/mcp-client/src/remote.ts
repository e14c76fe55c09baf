import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { fetch as undiciFetch, Pool, ProxyAgent } from 'undici'
import type { SandboxNetwork } from '@dsh/sandbox'
import { McpError, type McpRemoteServer } from '@dsh/mcp'
import { remoteHeaders } from './variables.ts'

/**
 * How a remote server is reached, from the session's authority (docs/architecture.md, "Authority: network"):
 * `host` directly (unconfined), `proxy` through the session's allow-list proxy (its socket), `none` not at all.
 */
export type RemoteNetwork = SandboxNetwork

/**
 * A fetch whose every connection is a CONNECT through the session's proxy on its Unix socket, so the proxy
 * decides the host as for any confined command (network.deny, network.allow, a person's approval) and logs
 * it; a refusal fails the request naming the proxy's status.
 */
function fetchThroughProxy(socketPath: string): { fetch: FetchLike; close: () => Promise<void> } {
  const dispatcher = new ProxyAgent({
    uri: 'http://dsh-session-proxy.invalid',
    clientFactory: (origin, options) => new Pool(origin, { ...options, connect: { socketPath } }),
  })
  const fetch: FetchLike = (url, init) =>
    undiciFetch(url, { ...(init as object), dispatcher } as Parameters<
      typeof undiciFetch
    >[1]) as unknown as Promise<Response>
  return { fetch, close: () => dispatcher.close() }
}

/** Streamable HTTP (`http`) or the legacy HTTP+SSE transport (`sse`), with the resolved headers on every request. */
export function openRemote(
  server: McpRemoteServer,
  environment: Readonly<Record<string, string | undefined>>,
  network: RemoteNetwork = { kind: 'host' },
): { transport: Transport; diagnostics: () => string } {
  if (network.kind === 'none')
    throw new McpError(
      'MCP_SERVER_FAILED',
      `MCP server "${server.name}" (${server.url}) cannot be reached: this session's mode has no network (no network row is mounted)`,
    )
  const requestInit = { headers: remoteHeaders(server, environment) }
  const url = new URL(server.url)
  const proxied = network.kind === 'proxy' ? fetchThroughProxy(network.socket) : undefined
  const options = { requestInit, ...(proxied ? { fetch: proxied.fetch } : {}) }
  const transport =
    server.transport === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, options)
  if (proxied) {
    // The MCP SDK's transports are no EventTarget: `onclose` is set by the Client, so wrap close instead.
    const close = transport.close.bind(transport)
    transport.close = async () => {
      await close()
      await proxied.close()
    }
  }
  return { transport, diagnostics: () => '' }
}
