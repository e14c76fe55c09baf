import type {} from '@dsh/commands'
import { mcpCommand } from './command.ts'
import type {} from '@dsh/agent'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import type {} from '@dsh/credentials'
import type { Context } from '@dsh/cordis'
import { Mcp, type McpServerConfig, type McpStatus } from '@dsh/mcp'
import type {} from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/subprocess'
import type { ToolDefinition } from '@dsh/tools'
import { mergeServers, parseServers } from './config.ts'
import { ServerConnection } from './connection.ts'
import { approveWorkspaceServer } from './approval.ts'
import { readConfigured } from './sources.ts'
import { openRemote } from './remote.ts'
import { openStdio } from './stdio.ts'
import { catalogOf, toolDefinitions } from './tools.ts'
import { resourceTool } from './resources.ts'
import { validCatalog, validStatus } from './validate.ts'

export { expandVariables, mergeServers, parseServer, parseServers } from './config.ts'
export { serverRule } from './approval.ts'
export { mapCallResult } from './results.ts'

export interface Config {
  userFile: string
  workspaceFile: string
  initializeTimeoutMs: number
  callTimeoutMs: number
  restartBackoffMs: number
  restartBackoffMaxMs: number
  stderrTailBytes: number
}

/** One agent's servers: their connections and the fork holding each server's registered tools. */
interface AgentServers {
  connections: Map<string, ServerConnection>
  tools: Map<string, { dispose(): unknown }>
  stop: AbortController
}

/**
 * ctx.mcp on the official MCP SDK. Each agent gets its own connections, opened on its first step (servers
 * start lazily, never at boot) and closed with the agent's scope; a server's tools are registered for that
 * agent only, as `mcp__<server>__<tool>`, and replaced when the server says its list changed (logged as
 * `mcp/catalog`). A workspace server (`.mcp.json`) starts only once a person approved it for the
 * workspace, or for this once. stdio children get ctx.subprocess's scrubbed environment plus the variables
 * their configuration names, confined by ctx.sandbox in confined modes unless the user set `sandbox: false`.
 */
export default class McpClient extends Mcp {
  // sandbox, sandboxPolicy, approval and credentials are read with ctx.get where they are used.
  static inject = ['sessions', 'tools', 'subprocess', 'app']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    userFile: Schema.string().default('mcp.yaml').description("The user's MCP servers file, relative to $DSH_HOME (or absolute): `mcpServers: { name: { command, args, env, trust, sandbox } }`."),
    workspaceFile: Schema.string().default('.mcp.json').description("The workspace's MCP servers file (the Claude Code format), relative to the session's cwd; its servers start only once approved."),
    initializeTimeoutMs: Schema.natural().min(1).default(15_000).description('How long a server may take to answer `initialize` (and each `tools/list` page) before it is a failed start.'),
    callTimeoutMs: Schema.natural().min(1).default(600_000).description('Deadline of one MCP tool call (the tools pipeline still applies its own).'),
    restartBackoffMs: Schema.natural().default(1_000).description('Wait before restarting a server that exited or failed to start; doubles with each consecutive failure.'),
    restartBackoffMaxMs: Schema.natural().default(30_000).description('The longest wait before a restart.'),
    stderrTailBytes: Schema.natural().default(4_000).description("Bytes of a stdio server's stderr kept for the message of a failed start or an exit."),
  })

  private readonly attached = new Map<string, McpServerConfig[]>()
  private readonly agents = new Map<string, AgentServers>()

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx)
    ctx.sessions.defineKind(ctx, 'mcp/catalog', { ignorable: true, validate: validCatalog })
    ctx.sessions.defineKind(ctx, 'mcp/status', { ignorable: true, validate: validStatus })
    ctx.on('agent/pre-step', async (step, next) => {
      await this.prepare(step.agent)
      return next()
    })
    ctx.inject(['commands'], (inner) => inner.commands.register(inner, mcpCommand(this)))
  }

  configured(cwd: string): Promise<McpServerConfig[]> {
    return readConfigured(this.ctx.app.home, cwd, this.config)
  }

  parse(servers: unknown, origin: 'sdk' | 'cli', source: string): McpServerConfig[] {
    return parseServers({ mcpServers: servers }, { origin, source, userKeys: true })
  }

  attach(session: Session, servers: McpServerConfig[]): void {
    this.attached.set(session.id, mergeServers(this.attached.get(session.id) ?? [], servers))
  }

  async servers(session: Session): Promise<McpServerConfig[]> {
    return mergeServers(await this.configured(session.cwd), this.attached.get(session.id) ?? [])
  }

  /** The agent's connections, opened once: every server started (or refused) before its first request. */
  private async prepare(agent: Agent): Promise<void> {
    if (this.agents.has(agent.id)) return
    const entry: AgentServers = { connections: new Map(), tools: new Map(), stop: new AbortController() }
    this.agents.set(agent.id, entry)
    agent.scope.effect(() => () => void this.release(agent, entry), 'mcp servers')
    const servers = await this.servers(agent.session)
    await Promise.all(servers.map((server) => this.open(agent, entry, server)))
    this.publishResources(agent, entry)
  }

  /** `mcp_resource` for the agent, naming the servers whose `initialize` answer offered resources (none: no tool). */
  private publishResources(agent: Agent, entry: AgentServers) {
    const offering = [...entry.connections.values()].filter((connection) => connection.offersResources)
    if (!offering.length || entry.stop.signal.aborted) return
    const tool = resourceTool(offering)
    agent.scope.plugin({ name: 'mcp-resources', apply: (ctx: Context) => this.ctx.tools.register(ctx, tool as ToolDefinition, { agentId: agent.id }) })
  }

  private async open(agent: Agent, entry: AgentServers, server: McpServerConfig): Promise<void> {
    if (server.origin === 'workspace') {
      const refusal = await approveWorkspaceServer(this.ctx, agent, server, entry.stop.signal)
      if (refusal) return this.status(agent.session, { server: server.name, state: 'refused', message: refusal })
    }
    const connection = new ServerConnection(server, {
      initializeTimeoutMs: this.config.initializeTimeoutMs,
      callTimeoutMs: this.config.callTimeoutMs,
      restartBackoffMs: this.config.restartBackoffMs,
      restartBackoffMaxMs: this.config.restartBackoffMaxMs,
      clientVersion: this.ctx.app.version,
      openTransport: () => this.transport(agent.session, server),
      onTools: (tools, reason) => this.publish(agent, entry, connection, tools, reason),
      onExit: (message, crashed) => this.status(agent.session, { server: server.name, state: crashed ? 'crashed' : 'failed', message }),
    })
    entry.connections.set(server.name, connection)
    try {
      await connection.ensure(entry.stop.signal)
      this.status(agent.session, { server: server.name, state: 'started' })
    } catch (error) {
      // Logged by onExit; the turn goes on without this server's tools, and the warning names it.
      this.ctx.logger('mcp').warn('%s', (error as Error).message)
    }
  }

  private async transport(session: Session, server: McpServerConfig) {
    if (server.transport !== 'stdio') return openRemote(server, process.env)
    const policy = this.ctx.get('sandboxPolicy')
    const authority = server.sandbox && policy ? await policy.authority(session) : undefined
    const sandbox = this.ctx.get('sandbox')
    return openStdio({
      server,
      cwd: session.cwd,
      baseEnvironment: this.ctx.subprocess.environment().env,
      processEnvironment: process.env,
      authority: authority && authority.mode !== 'danger-full-access' ? authority : undefined,
      ...(sandbox ? { confine: (argv: string[], options: Parameters<typeof sandbox.confine>[1]) => sandbox.confine(argv, options) } : {}),
      stderrTailBytes: this.config.stderrTailBytes,
    })
  }

  /** Registers a server's tools for the agent (replacing its earlier ones) and logs the catalog when it changed. */
  private publish(agent: Agent, entry: AgentServers, connection: ServerConnection, tools: Parameters<typeof catalogOf>[1], reason: 'connected' | 'restarted' | 'list_changed') {
    const server = connection.server
    const { entries, byName } = catalogOf(server, tools)
    entry.tools.get(server.name)?.dispose()
    const definitions = toolDefinitions(connection, byName)
    entry.tools.set(
      server.name,
      agent.scope.plugin({
        name: `mcp-tools:${server.name}`,
        apply: (ctx: Context) => definitions.forEach((tool) => this.ctx.tools.register(ctx, tool, { agentId: agent.id })),
      }),
    )
    const session = agent.session
    const last = session.all('mcp/catalog').findLast((event) => event.data.server === server.name)?.data
    if (session.closed || (last && JSON.stringify(last.tools) === JSON.stringify(entries))) return
    session.append('mcp/catalog', { server: server.name, origin: server.origin, reason, tools: entries })
  }

  private status(session: Session, status: McpStatus) {
    if (session.closed) return
    const redact = this.ctx.get('credentials')
    session.append('mcp/status', status.message && redact ? { ...status, message: redact.redact(status.message) } : status)
  }

  private async release(agent: Agent, entry: AgentServers) {
    this.agents.delete(agent.id)
    entry.stop.abort()
    const running = [...entry.connections.values()].filter((connection) => connection.ready)
    await Promise.all([...entry.connections.values()].map((connection) => connection.close()))
    for (const connection of running) this.status(agent.session, { server: connection.server.name, state: 'stopped' })
  }
}
