import { createHash } from 'node:crypto'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/approval'
import type { Context } from '@dsh/cordis'
import { isSecretName } from '@dsh/env-policy'
import type { McpServerConfig } from '@dsh/mcp'
import { referencedVariables } from './config.ts'

/**
 * The rule approving one workspace server: its name and a digest of everything that decides what runs
 * (command, arguments, environment names and values as written, URL, header names), so a commit that
 * changes the command of an approved name asks again.
 */
export function serverRule(server: McpServerConfig): string {
  const what =
    server.transport === 'stdio'
      ? [server.command, server.args, server.env]
      : [server.transport, server.url, Object.keys(server.headers).sort(), server.bearerTokenEnvVar ?? '']
  const digest = createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 16)
  return `mcpserver(${server.name}@${digest})`
}

/** A name is flagged when it, or a variable its value refers to, looks like a secret (the subprocess seam's policy). */
const flagged = (name: string, value: string) =>
  isSecretName(name) || referencedVariables(value).some(isSecretName) ? `${name} [secret-looking]` : name

/**
 * What the approval shows (issue 27: a person approves what will be set, not only what runs): the command and
 * its arguments or the URL, then every environment variable or header name the server gets, secret-looking
 * ones flagged. Values are never shown (a header may hold a token).
 */
export function describeServer(server: McpServerConfig): string {
  if (server.transport === 'stdio') {
    const env = Object.entries(server.env).map(([name, value]) => flagged(name, value))
    return `${[server.command, ...server.args].map((word) => JSON.stringify(word)).join(' ')}; env: ${env.join(', ') || 'none'}`
  }
  const headers = Object.entries(server.headers).map(([name, value]) => flagged(name, value))
  if (server.bearerTokenEnvVar)
    headers.push(`Authorization [secret-looking: bearer_token_env_var ${server.bearerTokenEnvVar}]`)
  return `${server.transport} ${server.url}; headers: ${headers.join(', ') || 'none'}`
}

/**
 * Asks once whether a workspace's server may start (a repository must never grant itself authority). The
 * request carries the exact rule, so "always in this workspace" keeps it in grants.yaml and later sessions
 * start the server with nobody asked. Returns why it may not start, or undefined when it may.
 */
export async function approveWorkspaceServer(
  ctx: Context,
  agent: Agent,
  server: McpServerConfig,
  signal: AbortSignal,
): Promise<string | undefined> {
  const approval = ctx.get('approval')
  const rule = serverRule(server)
  if (!approval || !(approval.canAsk || approval.canGrant({ rule })))
    return `not started: the workspace server is not approved and nobody can approve it (${server.source})`
  const decision = await approval.request(
    agent.session,
    {
      agentId: agent.id,
      tool: 'mcp',
      summary: `start MCP server "${server.name}" from ${server.source}: ${describeServer(server)}`,
      reason: `the workspace's ${server.source} asks to start an MCP server; it runs only once you approve it (always: for this workspace, until the file changes it)`,
      rule,
    },
    signal,
  )
  return decision.answer === 'reject'
    ? `not started: the workspace server was not approved (${decision.by})`
    : undefined
}
