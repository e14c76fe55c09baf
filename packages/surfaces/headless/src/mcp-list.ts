import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import type { McpServerConfig } from '@dsh/mcp'
import type { McpListInvocation } from './options.ts'
import type { RunIO } from './run.ts'

/** What a listing may show of a server: never an environment value or a header value (they may be secrets). */
function shown(server: McpServerConfig) {
  const common = {
    name: server.name,
    origin: server.origin,
    source: server.source,
    trust: server.trust,
    transport: server.transport,
  }
  if (server.transport === 'stdio')
    return {
      ...common,
      command: server.command,
      args: server.args,
      env: Object.keys(server.env),
      sandbox: server.sandbox,
    }
  return {
    ...common,
    url: server.url,
    headers: Object.keys(server.headers),
    ...(server.bearerTokenEnvVar ? { bearerTokenEnvVar: server.bearerTokenEnvVar } : {}),
  }
}

/**
 * `dsh mcp list [--cwd <dir>] [--json]`: the MCP servers a session in that directory would get from files
 * ($DSH_HOME/mcp.yaml, then the workspace's .mcp.json), each with where it came from. A workspace server
 * still needs approval before it starts; a bad file fails naming it.
 */
export async function listMcpServers(ctx: Context, invocation: McpListInvocation, io: RunIO): Promise<number> {
  const mcp = ctx.get('mcp')
  if (!mcp) throw new Error('no mcp row is mounted in this profile, so there are no MCP servers to list')
  const cwd = resolve(ctx.app.cwd, invocation.cwd ?? '.')
  const servers = (await mcp.configured(cwd)).map(shown)
  if (invocation.json) {
    for (const server of servers) io.stdout.write(JSON.stringify(server) + '\n')
    return 0
  }
  const lines = [`MCP servers for ${cwd}`]
  if (!servers.length) lines.push('(none: add them to $DSH_HOME/mcp.yaml or the workspace .mcp.json)')
  for (const server of servers) {
    const what = 'command' in server ? [server.command, ...server.args].join(' ') : `${server.transport} ${server.url}`
    const notes = [
      `trust ${server.trust}`,
      ...('sandbox' in server && !server.sandbox ? ['unconfined'] : []),
      ...(server.origin === 'workspace' ? ['starts once approved'] : []),
    ]
    lines.push(`${server.name}  ${server.origin} (${server.source})  ${what}  [${notes.join(', ')}]`)
  }
  io.stdout.write(lines.join('\n') + '\n')
  return 0
}
