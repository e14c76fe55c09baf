import { McpError, MCP_SERVER_NAME, type McpServerConfig } from '@dsh/mcp'
import { expandVariables, type UnsetReason } from './config.ts'

// A repository's config expands nothing of dsh's (docs/security.md; docs/architecture.md, "MCP servers"): a
// workspace server's `${VAR}` and `bearer_token_env_var` are looked up only in the values the user's own file
// declares for that server name, never in dsh's environment, whatever the approval answer.

type Environment = Readonly<Record<string, string | undefined>>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value)
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The user file's `workspaceVariables: { <server>: { <VAR>: <value> } }`: what a workspace server of that name
 * may expand. A bad shape is MCP_CONFIG_INVALID naming the file and the key.
 */
export function parseWorkspaceVariables(document: unknown, source: string): Record<string, Record<string, string>> {
  const declared = isRecord(document) ? document.workspaceVariables : undefined
  if (declared === undefined) return {}
  const bad = (what: string) => new McpError('MCP_CONFIG_INVALID', `${source}: workspaceVariables${what}`)
  if (!isRecord(declared)) throw bad(' must map MCP server names to { VARIABLE: value }')
  const result: Record<string, Record<string, string>> = {}
  for (const [server, values] of Object.entries(declared)) {
    if (!MCP_SERVER_NAME.test(server)) throw bad(`: "${server}" is not an MCP server name`)
    if (!isRecord(values)) throw bad(`.${server} must map variable names to strings`)
    for (const [name, value] of Object.entries(values)) {
      if (!VARIABLE.test(name)) throw bad(`.${server}: "${name}" is not a variable name`)
      if (typeof value !== 'string') throw bad(`.${server}.${name} must be a string`)
    }
    result[server] = { ...(values as Record<string, string>) }
  }
  return result
}

/** Where a server's `${VAR}` come from: dsh's environment for the user's own sources; the user's declared values for a workspace server. */
export interface VariableSource {
  values: Environment
  unset: UnsetReason
}

export function variablesOf(server: McpServerConfig, environment: Environment): VariableSource {
  if (server.origin !== 'workspace') return { values: environment, unset: () => 'which is not set' }
  const declared = server.userVariables ?? { source: 'the user MCP file', values: {} }
  const values: Record<string, string> = {}
  for (const [name, text] of Object.entries(declared.values)) {
    // The user's own text: its ${VAR} are theirs to take from dsh's environment.
    values[name] = expandVariables(text, environment, `${declared.source}: workspaceVariables.${server.name}.${name}`)
  }
  return {
    values,
    unset: (name) =>
      `which ${declared.source} does not declare for this server (workspaceVariables: { ${server.name}: { ${name}: … } }): a workspace's configuration is never expanded from dsh's environment`,
  }
}

/** A stdio server's own variables, expanded (an editor's values are taken as they are). */
export function serverEnvironment(
  server: Extract<McpServerConfig, { transport: 'stdio' }>,
  environment: Environment,
): Record<string, string> {
  const env: Record<string, string> = {}
  const literal = server.origin === 'acp'
  const source = literal ? undefined : variablesOf(server, environment)
  for (const [name, value] of Object.entries(server.env)) {
    env[name] = source
      ? expandVariables(
          value,
          source.values,
          `${server.source}: MCP server "${server.name}": env ${name}`,
          source.unset,
        )
      : value
  }
  return env
}

/**
 * The headers a remote server gets, resolved when connecting and held only by the transport: `${VAR}`
 * expanded (not for an editor's values), and `Authorization: Bearer` from the variable `bearer_token_env_var`
 * names. Nothing here is logged: events carry the server's name only.
 */
export function remoteHeaders(
  server: Extract<McpServerConfig, { transport: 'http' | 'sse' }>,
  environment: Environment,
): Record<string, string> {
  const literal = server.origin === 'acp'
  const source = variablesOf(server, environment)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(server.headers)) {
    headers[name] = literal
      ? value
      : expandVariables(
          value,
          source.values,
          `${server.source}: MCP server "${server.name}": header ${name}`,
          source.unset,
        )
  }
  if (server.bearerTokenEnvVar) {
    const token = source.values[server.bearerTokenEnvVar]
    if (!token)
      throw new McpError(
        'MCP_CONFIG_INVALID',
        `${server.source}: MCP server "${server.name}": bearer_token_env_var names ${server.bearerTokenEnvVar}, ${source.unset(server.bearerTokenEnvVar)}`,
      )
    headers.Authorization = `Bearer ${token}`
  }
  return headers
}

/** Resolves every variable a server's start needs and forgets the values: a workspace server that cannot start fails here, before it is approved or spawned. */
export function checkVariables(server: McpServerConfig, environment: Environment): void {
  if (server.transport === 'stdio') serverEnvironment(server, environment)
  else remoteHeaders(server, environment)
}
