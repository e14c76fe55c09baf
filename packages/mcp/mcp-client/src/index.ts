import type {} from '@dsh/commands'
import { mcpCommand } from './command.ts'
import type {} from '@dsh/agent'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import type {} from '@dsh/credentials'
import type { Context } from '@dsh/cordis'
import {
  Mcp,
  McpCatalogData,
  McpError,
  McpPromptUseData,
  McpStatusData,
  type McpProbe,
  type McpServerConfig,
  type McpStart,
  type McpStatus,
} from '@dsh/mcp'
import type {} from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import type {} from '@dsh/settings'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/subprocess'
import type { ToolDefinition } from '@dsh/tools'
import { mergeServers, parseServers } from './config.ts'
import { ServerConnection } from './connection.ts'
import { approveWorkspaceServer } from './approval.ts'
import { readConfigured, userFilePath } from './sources.ts'
import { addUserServer, removeUserServer } from './user-file.ts'
import { openRemote } from './remote.ts'
import { openStdio } from './stdio.ts'
import { checkVariables } from './variables.ts'
import { catalogOf, toolDefinitions } from './tools.ts'
import { resourceTool } from './resources.ts'
import { promptCommand } from './prompts.ts'
import type { Prompt } from '@modelcontextprotocol/sdk/types.js'
import type { CommandDefinition } from '@dsh/commands'

export { expandVariables, mergeServers, parseServer, parseServers } from './config.ts'
export { describeServer, serverRule } from './approval.ts'
export { mapCallResult } from './results.ts'

declare module '@dsh/settings' {
  interface Settings {
    'mcp.start': McpStart
  }
}

export interface Config {
  userFile: string
  workspaceFile: string
  initializeTimeoutMs: number
  callTimeoutMs: number
  maxListPages: number
  restartBackoffMs: number
  restartBackoffMaxMs: number
  stderrTailBytes: number
}

/** One agent's servers: their connections and the fork holding each server's registered tools. */
interface AgentServers {
  agent: Agent
  /** Each started server's prompts (offered as slash commands to this agent's workspace). */
  prompts: Map<string, Prompt[]>
  connections: Map<string, ServerConnection>
  tools: Map<string, { dispose(): unknown }>
  /** Each server's start (approval, spawn, initialize), begun once: eager at creation, the rest at the first step. */
  opening: Map<string, Promise<void>>
  /** The start of every server before the first request. */
  all?: Promise<void>
  /** The registered `mcp_resource` and the servers it names. */
  resources?: { names: string; fiber: { dispose(): unknown } }
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
    userFile: Schema.string()
      .default('mcp.yaml')
      .description(
        "The user's MCP servers file, relative to $DSH_HOME (or absolute): `mcpServers: { name: { command, args, env, trust, sandbox } }`.",
      ),
    workspaceFile: Schema.string()
      .default('.mcp.json')
      .description(
        "The workspace's MCP servers file (the Claude Code format), relative to the session's cwd; its servers start only once approved.",
      ),
    initializeTimeoutMs: Schema.natural()
      .min(1)
      .default(15_000)
      .description(
        'How long a server may take to answer `initialize` (and each `tools/list` page) before it is a failed start.',
      ),
    callTimeoutMs: Schema.natural()
      .min(1)
      .default(600_000)
      .description('Deadline of one MCP tool call (the tools pipeline still applies its own).'),
    maxListPages: Schema.natural()
      .min(1)
      .default(100)
      .description(
        'Pages of one tools/resources/prompts listing before the server is taken for broken (a cursor chain without end).',
      ),
    restartBackoffMs: Schema.natural()
      .default(1_000)
      .description(
        'Wait before restarting a server that exited or failed to start; doubles with each consecutive failure.',
      ),
    restartBackoffMaxMs: Schema.natural().default(30_000).description('The longest wait before a restart.'),
    stderrTailBytes: Schema.natural()
      .default(4_000)
      .description("Bytes of a stdio server's stderr kept for the message of a failed start or an exit."),
  })

  private readonly attached = new Map<string, McpServerConfig[]>()
  private readonly agents = new Map<string, AgentServers>()

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx)
    ctx.sessions.defineKind(ctx, 'mcp/catalog', { ignorable: true, schema: McpCatalogData })
    ctx.sessions.defineKind(ctx, 'mcp/status', { ignorable: true, schema: McpStatusData })
    ctx.sessions.defineKind(ctx, 'mcp/prompt', { ignorable: true, schema: McpPromptUseData })
    ctx.on('agent/pre-step', async (step, next) => {
      await this.prepare(step.agent)
      return next()
    })
    ctx.on('agent/created', (agent) => this.startEager(agent))
    ctx.inject(['commands'], (inner) => {
      inner.commands.register(inner, mcpCommand(this))
      inner.commands.useSource(inner, { list: async (cwd) => this.promptCommands(cwd) })
    })
    ctx.inject(['settings'], (inner) =>
      inner.settings.define('mcp.start', Schema.union(['lazy', 'eager'] as const).default('lazy'), {
        description:
          "When an agent's MCP servers start unless a server sets `start`: lazy (at its first step) or eager (when the session starts, so the first turn does not wait).",
      }),
    )
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

  /** The prompts of the servers running for agents in `cwd`, as slash commands (a name taken twice: the first). */
  private promptCommands(cwd: string): CommandDefinition[] {
    const commands = new Map<string, CommandDefinition>()
    for (const entry of this.agents.values()) {
      if (entry.agent.session.cwd !== cwd) continue
      for (const [server, prompts] of entry.prompts)
        for (const prompt of prompts) {
          const command = promptCommand(
            server,
            prompt,
            (agent) => this.agents.get(agent.id)?.connections.get(server),
            (agent, args) => agent.session.append('mcp/prompt', { server, prompt: prompt.name, arguments: args }),
          )
          if (!commands.has(command.name)) commands.set(command.name, command)
        }
    }
    return [...commands.values()]
  }

  userFile(): string {
    return userFilePath(this.ctx.app.home, this.config.userFile)
  }

  addUserServer(name: string, entry: Record<string, unknown>): Promise<void> {
    return addUserServer(this.userFile(), name, entry)
  }

  removeUserServer(name: string): Promise<void> {
    return removeUserServer(this.userFile(), name)
  }

  async probe(agent: Agent, name: string): Promise<McpProbe> {
    const servers = await this.servers(agent.session)
    const server = servers.find((candidate) => candidate.name === name)
    if (!server)
      throw new McpError(
        'MCP_CONFIG_INVALID',
        `no MCP server named "${name}" for ${agent.session.cwd} (configured: ${servers.map((known) => known.name).join(', ') || 'none'})`,
      )
    const entry = this.entryOf(agent)
    const since = (start: number) => Math.round(performance.now() - start)
    const started = performance.now()
    const opening = this.open(agent, entry, server)
    entry.opening.set(name, opening)
    await opening
    const startMs = since(started)
    const base = { server: name, origin: server.origin, transport: server.transport }
    const connection = entry.connections.get(name)
    if (!connection?.ready) {
      const status = agent.session.all('mcp/status').findLast((event) => event.data.server === name)?.data
      return {
        ...base,
        ok: false,
        message: status?.message ?? `MCP server "${name}" did not start`,
        startMs,
        tools: [],
      }
    }
    const listed = performance.now()
    const tools = await connection.tools(entry.stop.signal)
    const listMs = since(listed)
    const stopping = performance.now()
    await connection.close()
    this.status(agent.session, { server: name, state: 'stopped' })
    return {
      ...base,
      ok: true,
      startMs,
      listMs,
      stopMs: since(stopping),
      tools: tools.map((tool) => ({ tool: tool.name, description: tool.description ?? '' })),
    }
  }

  /** The agent's servers, tracked from its first start (eager or at its first step) until its scope ends. */
  private entryOf(agent: Agent): AgentServers {
    const known = this.agents.get(agent.id)
    if (known) return known
    const entry: AgentServers = {
      agent,
      prompts: new Map(),
      connections: new Map(),
      tools: new Map(),
      opening: new Map(),
      stop: new AbortController(),
    }
    this.agents.set(agent.id, entry)
    agent.scope.effect(() => () => void this.release(agent, entry), 'mcp servers')
    return entry
  }

  /** A server's `start`, else the `mcp.start` setting (lazy where no settings are mounted). */
  private startOf(server: McpServerConfig): McpStart {
    return server.start ?? ((this.ctx.get('settings')?.get('mcp.start') as McpStart | undefined) || 'lazy')
  }

  /** At the agent's creation: starts its eager servers in the background (a failure is logged and warned, never thrown). */
  private startEager(agent: Agent): void {
    this.startServers(agent, (server) => this.startOf(server) === 'eager').catch((error: Error) =>
      this.ctx.logger('mcp').warn('%s', error.message),
    )
  }

  /** Before the agent's first request: every server started (or refused), eager ones included, once. */
  private prepare(agent: Agent): Promise<void> {
    const entry = this.entryOf(agent)
    entry.all ??= this.startServers(agent, () => true)
    return entry.all
  }

  /** Starts the servers `which` selects that are not started yet, and waits for every start begun so far. */
  private async startServers(agent: Agent, which: (server: McpServerConfig) => boolean): Promise<void> {
    const entry = this.entryOf(agent)
    const servers = await this.servers(agent.session)
    for (const server of servers)
      if (!entry.opening.has(server.name) && which(server))
        entry.opening.set(server.name, this.open(agent, entry, server))
    await Promise.all(entry.opening.values())
    this.publishResources(agent, entry)
  }

  /** `mcp_resource` for the agent, naming the servers whose `initialize` answer offered resources (none: no tool). */
  private publishResources(agent: Agent, entry: AgentServers) {
    const offering = [...entry.connections.values()].filter((connection) => connection.offersResources)
    const names = offering.map((connection) => connection.server.name).join(',')
    if (entry.stop.signal.aborted || names === (entry.resources?.names ?? '')) return
    entry.resources?.fiber.dispose()
    const tool = resourceTool(offering) as ToolDefinition
    entry.resources = names
      ? {
          names,
          fiber: agent.scope.plugin({
            name: 'mcp-resources',
            apply: (ctx: Context) => this.ctx.tools.register(ctx, tool, { agentId: agent.id }),
          }),
        }
      : undefined
  }

  private async open(agent: Agent, entry: AgentServers, server: McpServerConfig): Promise<void> {
    if (server.origin === 'workspace') {
      // Fail closed before anyone is asked: a variable the user declared nothing for is never taken from dsh's environment.
      try {
        checkVariables(server, process.env)
      } catch (error) {
        this.ctx.logger('mcp').warn('%s', (error as Error).message)
        return this.status(agent.session, { server: server.name, state: 'failed', message: (error as Error).message })
      }
      const refusal = await approveWorkspaceServer(this.ctx, agent, server, entry.stop.signal)
      if (refusal) return this.status(agent.session, { server: server.name, state: 'refused', message: refusal })
    }
    if (entry.stop.signal.aborted) return // the agent ended while the server was being approved
    const connection = new ServerConnection(server, {
      initializeTimeoutMs: this.config.initializeTimeoutMs,
      callTimeoutMs: this.config.callTimeoutMs,
      maxListPages: this.config.maxListPages,
      restartBackoffMs: this.config.restartBackoffMs,
      restartBackoffMaxMs: this.config.restartBackoffMaxMs,
      clientVersion: this.ctx.app.version,
      openTransport: () => this.transport(agent.session, server),
      onTools: (tools, reason) => this.publish(agent, entry, connection, tools, reason),
      onExit: (message, crashed) =>
        this.status(agent.session, { server: server.name, state: crashed ? 'crashed' : 'failed', message }),
    })
    entry.connections.set(server.name, connection)
    try {
      await connection.ensure(entry.stop.signal)
      // Its prompts are listed before it is said to be started: a surface that lists commands once the server has
      // started (the status is its cue) sees them. A server that cannot list them still starts, without them.
      if (connection.offersPrompts)
        entry.prompts.set(
          server.name,
          await connection.prompts(entry.stop.signal).catch((error: unknown) => {
            this.ctx
              .logger('mcp')
              .warn('%s: its prompts could not be listed: %s', server.name, (error as Error).message)
            return []
          }),
        )
      this.status(agent.session, { server: server.name, state: 'started' })
    } catch (error) {
      // Logged by onExit; the turn goes on without this server's tools, and the warning names it.
      this.ctx.logger('mcp').warn('%s', (error as Error).message)
    }
  }

  private async transport(session: Session, server: McpServerConfig) {
    const policy = this.ctx.get('sandboxPolicy')
    // A remote server is reached as a confined command reaches the network: through the session's proxy.
    if (server.transport !== 'stdio')
      return openRemote(server, process.env, policy ? await policy.network(session) : undefined)
    const authority = server.sandbox && policy ? await policy.authority(session) : undefined
    const sandbox = this.ctx.get('sandbox')
    return openStdio({
      server,
      cwd: session.cwd,
      baseEnvironment: this.ctx.subprocess.environment().env,
      processEnvironment: process.env,
      authority: authority && authority.mode !== 'danger-full-access' ? authority : undefined,
      ...(sandbox
        ? {
            confine: (argv: string[], options: Parameters<typeof sandbox.confine>[1]) => sandbox.confine(argv, options),
          }
        : {}),
      stderrTailBytes: this.config.stderrTailBytes,
    })
  }

  /** Registers a server's tools for the agent (replacing its earlier ones) and logs the catalog when it changed. */
  private publish(
    agent: Agent,
    entry: AgentServers,
    connection: ServerConnection,
    tools: Parameters<typeof catalogOf>[1],
    reason: 'connected' | 'restarted' | 'list_changed',
  ) {
    const server = connection.server
    const { entries, byName } = catalogOf(server, tools)
    entry.tools.get(server.name)?.dispose()
    const definitions = toolDefinitions(connection, byName)
    entry.tools.set(
      server.name,
      agent.scope.plugin({
        name: `mcp-tools:${server.name}`,
        apply: (ctx: Context) =>
          definitions.forEach((tool) => this.ctx.tools.register(ctx, tool, { agentId: agent.id })),
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
    session.append(
      'mcp/status',
      status.message && redact ? { ...status, message: redact.redact(status.message) } : status,
    )
  }

  private async release(agent: Agent, entry: AgentServers) {
    this.agents.delete(agent.id)
    entry.stop.abort()
    const running = [...entry.connections.values()].filter((connection) => connection.ready)
    await Promise.all([...entry.connections.values()].map((connection) => connection.close()))
    for (const connection of running) this.status(agent.session, { server: connection.server.name, state: 'stopped' })
  }
}
