// The MCP seam (docs/architecture.md, "MCP servers"): which Model Context Protocol servers a session may
// use, where each came from, and how their tools are named. Nothing here runs; `@dsh/mcp-client` does.
import { type Context, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import { oneOf, Type, type Session, type Static } from '@dsh/session'

/** Where a server's configuration came from (shown by `dsh mcp list`; a workspace server needs approval once). */
export const MCP_ORIGINS = ['user', 'workspace', 'acp', 'sdk', 'cli'] as const
export type McpOrigin = (typeof MCP_ORIGINS)[number]

/** `ask`: every call of the server's tools is an approval request (grants may answer it); `allow`: no question. */
export type McpTrust = 'ask' | 'allow'

interface ServerCommon {
  /** `[A-Za-z0-9_-]`, no `__` (the tool name separator). */
  name: string
  origin: McpOrigin
  /** The file or the request it was read from (`~/.dsh/mcp.yaml`, `/repo/.mcp.json`, `session/new`). */
  source: string
  trust: McpTrust
  /**
   * `eager`: started when the agent is created (session start), so its tools are ready for the first turn;
   * `lazy`: at the agent's first step. Unset: the `mcp.start` setting decides.
   */
  start?: McpStart
  /**
   * A workspace server's only source of variables (docs/security.md: a repository's config expands nothing
   * of dsh's): the values the user's file declares for this server name (`workspaceVariables`), as written
   * there (their own `${VAR}` are the user's, expanded from dsh's environment). Absent for other origins.
   */
  userVariables?: { source: string; values: Record<string, string> }
}

export type McpStart = 'eager' | 'lazy'

/** A server dsh starts as a child process and speaks to over its stdin and stdout. */
export interface McpStdioServer extends ServerCommon {
  transport: 'stdio'
  command: string
  args: string[]
  /**
   * Variables the server gets on top of the scrubbed environment, `${VAR}` expanded from dsh's environment
   * (except for `acp`: an editor passes values; and `workspace`: only from `userVariables`).
   * The only way a secret reaches a server: by being named here.
   */
  env: Record<string, string>
  /** Run outside the sandbox even in confined modes (only from the user's own configuration). */
  sandbox: boolean
}

/** A server dsh reaches over HTTP: streamable HTTP (`http`) or the legacy HTTP+SSE transport (`sse`). */
export interface McpRemoteServer extends ServerCommon {
  transport: 'http' | 'sse'
  url: string
  /** Sent with every request, `${VAR}` expanded when connecting; never logged. */
  headers: Record<string, string>
  /** The variable whose value is sent as `Authorization: Bearer …` (read when connecting; never logged). */
  bearerTokenEnvVar?: string
}

export type McpServerConfig = McpStdioServer | McpRemoteServer

// Each MCP kind's type and its check are one TypeBox schema (issue #28.6).

/** One tool a server listed, as the catalog event keeps it (its full schema is in the next `request/header`). */
const McpCatalogToolData = Type.Object({
  /** The dsh tool name (`mcp__<server>__<tool>`). */
  name: Type.String(),
  /** The server's own name for it. */
  tool: Type.String(),
  description: Type.String(),
})
export type McpCatalogTool = Static<typeof McpCatalogToolData>

export const MCP_CATALOG_REASONS = ['connected', 'restarted', 'list_changed'] as const

/**
 * `mcp/catalog`: the tools a server offers an agent, logged when they were first listed, after a restart
 * and on `notifications/tools/list_changed`. The request derives its tools from `request/header`; this
 * says why they changed.
 */
export const McpCatalogData = Type.Object({
  server: Type.String(),
  origin: oneOf(MCP_ORIGINS),
  reason: oneOf(MCP_CATALOG_REASONS),
  tools: Type.Array(McpCatalogToolData),
})
export type McpCatalog = Static<typeof McpCatalogData>

export const MCP_SERVER_STATES = ['started', 'failed', 'crashed', 'stopped', 'refused'] as const
export type McpServerState = (typeof MCP_SERVER_STATES)[number]

/** `mcp/status`: a server's life in a session (never a configuration value: no command line, no header). */
export const McpStatusData = Type.Object({
  server: Type.String(),
  state: oneOf(MCP_SERVER_STATES),
  message: Type.Optional(Type.String()),
})
export type McpStatus = Static<typeof McpStatusData>

/** What `dsh mcp test` reports of one server: started, listed and stopped as an agent would, with timings. */
export interface McpProbe {
  server: string
  origin: McpOrigin
  transport: McpServerConfig['transport']
  ok: boolean
  /** Why it did not start (refused, failed, timed out), naming the server. */
  message?: string
  /** From the start (approval included) until the server answered `initialize` and its first `tools/list`. */
  startMs: number
  /** A second `tools/list` on the running server. */
  listMs?: number
  stopMs?: number
  tools: { tool: string; description: string }[]
}

/**
 * `mcp/prompt`: a person ran a server's prompt as a slash command (`/mcp__<server>__<prompt> …`); the user
 * message that follows is that prompt's text. Not model-visible itself (the user message is).
 */
export const McpPromptUseData = Type.Object({
  server: Type.String(),
  prompt: Type.String(),
  arguments: Type.Record(Type.String(), Type.String()),
})
export type McpPromptUse = Static<typeof McpPromptUseData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'mcp/catalog': McpCatalog
    'mcp/status': McpStatus
    'mcp/prompt': McpPromptUse
  }
}

declare module '@dsh/cordis' {
  interface Context {
    mcp: Mcp
  }
}

/** A configuration that cannot be used, or a server that could not be reached; the message names the server and where. */
export class McpError extends Error {
  override name = 'McpError'
  constructor(
    readonly code: 'MCP_CONFIG_INVALID' | 'MCP_SERVER_FAILED' | 'MCP_INIT_TIMEOUT',
    message: string,
  ) {
    super(message)
  }
}

export const MCP_SERVER_NAME = /^(?!.*__)[A-Za-z0-9_-]{1,48}$/
const TOOL_PREFIX = 'mcp__'

/** The dsh tool name of a server's tool: characters a model provider refuses become `_`. */
export const mcpToolName = (server: string, tool: string): string =>
  `${TOOL_PREFIX}${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`

/** The one tool that lists and reads the resources of an agent's MCP servers (arguments `{ server, uri? }`). */
export const MCP_RESOURCE_TOOL = 'mcp_resource'

/** What rules call a server's resources: `mcp(<server>/@resources)` (`@` is in no MCP tool name; `mcp(<server>/*)` covers it). */
export const MCP_RESOURCES_RULE_NAME = '@resources'

/** The server and tool of an `mcp__<server>__<tool>` name, or undefined for any other name. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(TOOL_PREFIX)) return undefined
  const rest = name.slice(TOOL_PREFIX.length)
  const cut = rest.indexOf('__')
  if (cut <= 0 || cut + 2 >= rest.length) return undefined
  return { server: rest.slice(0, cut), tool: rest.slice(cut + 2) }
}

/**
 * The MCP servers of sessions (issue #14). Owns: each session's server list (user, workspace and the
 * servers a client passed for that session), the servers' lifetimes and the `mcp/catalog` and `mcp/status`
 * kinds. Must not own: whether a call may run (the tools pipeline, approvals and grants decide), confinement
 * (ctx.sandbox) or the environment policy (ctx.subprocess).
 */
export abstract class Mcp extends Service {
  constructor(ctx: Context) {
    super(ctx, 'mcp')
  }

  /** The servers configured for a workspace, before any session: user file, then the workspace's `.mcp.json`. */
  abstract configured(cwd: string): Promise<McpServerConfig[]>

  /**
   * Reads servers in the `mcpServers` shape (`{ name: { command, args, env, trust, sandbox } | { type, url, headers,
   * bearer_token_env_var, trust } }`) that a user's program or flag passes (origin `sdk` or `cli`); throws McpError
   * (MCP_CONFIG_INVALID) naming `source`, the server and the key. Surfaces call it before creating the session.
   */
  abstract parse(servers: unknown, origin: 'sdk' | 'cli', source: string): McpServerConfig[]

  /** Adds servers a client passed for one session (ACP `mcpServers`, the SDK's option); a same name replaces. */
  abstract attach(session: Session, servers: McpServerConfig[]): void

  /** The servers a session uses: configured ones, then attached ones (a later source replaces a same name). */
  abstract servers(session: Session): Promise<McpServerConfig[]>

  /** The user's servers file (`$DSH_HOME/mcp.yaml` unless configured otherwise). */
  abstract userFile(): string

  /**
   * Adds a server to the user's file in the `mcpServers` entry shape, keeping the file's comments and layout;
   * throws McpError naming the file, the server and the key for a bad entry or a taken name.
   */
  abstract addUserServer(name: string, entry: Record<string, unknown>): Promise<void>

  /** Removes a server from the user's file; throws McpError listing the configured names when it has none by that name. */
  abstract removeUserServer(name: string): Promise<void>

  /**
   * Starts one of the agent's servers as its first step would (approval, environment policy, sandbox, all
   * logged), lists its tools and stops it; throws McpError when the agent has no server by that name.
   */
  abstract probe(agent: Agent, name: string): Promise<McpProbe>
}
