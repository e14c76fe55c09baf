import { McpError, MCP_SERVER_NAME, type McpOrigin, type McpServerConfig } from '@dsh/mcp'

/** What a source may say beyond the Claude Code keys: a workspace file may not mark itself trusted or unconfined. */
export interface SourceRules {
  origin: McpOrigin
  source: string
  /** `trust` and `sandbox` are read (user files, SDK and CLI options); otherwise every server asks and is confined. */
  userKeys: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value)

const STDIO_KEYS = ['type', 'command', 'args', 'env']
const REMOTE_KEYS = ['type', 'url', 'headers', 'bearer_token_env_var']
const USER_KEYS = ['trust', 'sandbox', 'start']

function stringRecord(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {}
  if (!isRecord(value) || Object.values(value).some((item) => typeof item !== 'string'))
    throw new Error(`${what} must map names to strings`)
  return { ...(value as Record<string, string>) }
}

/**
 * One server entry in the Claude Code shape (`{ command, args, env }` or `{ type: http|sse, url, headers }`),
 * plus dsh's `trust`, `sandbox` and `bearer_token_env_var` where the source may set them. Throws
 * MCP_CONFIG_INVALID naming the source, the server and the key.
 */
export function parseServer(name: string, raw: unknown, rules: SourceRules): McpServerConfig {
  const where = `${rules.source}: MCP server "${name}"`
  try {
    if (!MCP_SERVER_NAME.test(name)) throw new Error('its name must be 1–48 letters, digits, "-" or "_" (no "__")')
    if (!isRecord(raw)) throw new Error('must be an object')
    const type = raw.type ?? (raw.url !== undefined ? 'http' : 'stdio')
    if (type !== 'stdio' && type !== 'http' && type !== 'sse')
      throw new Error(`type must be stdio, http or sse, not ${JSON.stringify(type)}`)
    const known = [...(type === 'stdio' ? STDIO_KEYS : REMOTE_KEYS), ...USER_KEYS]
    const unknown = Object.keys(raw).filter((key) => !known.includes(key))
    // A workspace file is read as Claude Code writes it: keys dsh does not know there are left alone.
    if (unknown.length && rules.origin !== 'workspace')
      throw new Error(`unknown key ${unknown.map((key) => `"${key}"`).join(', ')} (known: ${known.join(', ')})`)
    const trust = rules.userKeys && raw.trust !== undefined ? raw.trust : 'ask'
    if (trust !== 'ask' && trust !== 'allow') throw new Error('trust must be ask or allow')
    const start = rules.userKeys ? raw.start : undefined
    if (start !== undefined && start !== 'eager' && start !== 'lazy') throw new Error('start must be eager or lazy')
    const common = {
      name,
      origin: rules.origin,
      source: rules.source,
      trust,
      ...(start ? { start: start as 'eager' | 'lazy' } : {}),
    } as const
    if (type === 'stdio') {
      if (typeof raw.command !== 'string' || !raw.command) throw new Error('command must be a non-empty string')
      if (raw.args !== undefined && (!Array.isArray(raw.args) || raw.args.some((arg) => typeof arg !== 'string')))
        throw new Error('args must be a list of strings')
      const sandbox = rules.userKeys && raw.sandbox !== undefined ? raw.sandbox : true
      if (typeof sandbox !== 'boolean') throw new Error('sandbox must be true or false')
      return {
        ...common,
        transport: 'stdio',
        command: raw.command,
        args: [...((raw.args as string[]) ?? [])],
        env: stringRecord(raw.env, 'env'),
        sandbox,
      }
    }
    if (typeof raw.url !== 'string' || !/^https?:\/\//.test(raw.url)) throw new Error('url must be an http(s) URL')
    const bearer = raw.bearer_token_env_var
    if (bearer !== undefined && (typeof bearer !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(bearer)))
      throw new Error('bearer_token_env_var must be a variable name')
    return {
      ...common,
      transport: type,
      url: raw.url,
      headers: stringRecord(raw.headers, 'headers'),
      ...(bearer ? { bearerTokenEnvVar: bearer as string } : {}),
    }
  } catch (error) {
    throw new McpError('MCP_CONFIG_INVALID', `${where}: ${(error as Error).message}`)
  }
}

/** The servers of a file's `mcpServers` mapping (`servers` is accepted too in dsh's own YAML file). */
export function parseServers(document: unknown, rules: SourceRules): McpServerConfig[] {
  if (document === undefined || document === null) return []
  if (!isRecord(document))
    throw new McpError('MCP_CONFIG_INVALID', `${rules.source}: expected an object with "mcpServers"`)
  const servers = document.mcpServers ?? (rules.origin === 'workspace' ? undefined : document.servers)
  if (servers === undefined) return []
  if (!isRecord(servers))
    throw new McpError('MCP_CONFIG_INVALID', `${rules.source}: "mcpServers" must map server names to their settings`)
  return Object.entries(servers).map(([name, raw]) => parseServer(name, raw, rules))
}

/** Later sources replace a same-named server of earlier ones (user < workspace < session < client). */
export function mergeServers(...lists: McpServerConfig[][]): McpServerConfig[] {
  const byName = new Map<string, McpServerConfig>()
  for (const server of lists.flat()) {
    byName.delete(server.name)
    byName.set(server.name, server)
  }
  return [...byName.values()]
}

const VARIABLE_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/** Why a variable has no value, for the error naming it (`which is not set`, or where a workspace server's values come from). */
export type UnsetReason = (name: string) => string

/**
 * `${VAR}` and `${VAR:-default}` from `environment` (the Claude Code expansion). An unset variable with
 * no default is an error naming the server and the variable: a server started without its key fails late.
 */
export function expandVariables(
  text: string,
  environment: Readonly<Record<string, string | undefined>>,
  where: string,
  unset: UnsetReason = () => 'which is not set',
): string {
  return text.replace(VARIABLE_REFERENCE, (_whole, name: string, fallback: string | undefined) => {
    const value = environment[name]
    if (value !== undefined && value !== '') return value
    if (fallback !== undefined) return fallback
    throw new McpError('MCP_CONFIG_INVALID', `${where} refers to \${${name}}, ${unset(name)}`)
  })
}

/** The variables `text` refers to (`${VAR}`, `${VAR:-default}`). */
export const referencedVariables = (text: string): string[] =>
  [...text.matchAll(VARIABLE_REFERENCE)].map((match) => match[1]!)
