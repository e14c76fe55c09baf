import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/checkpoints'
import type {} from '@dsh/commands'
import type {} from '@dsh/session-changes'
import type { Route } from '@dsh/llm'
import type { PermissionPresets } from '@dsh/permission-presets'
import {
  PROTOCOL_VERSION,
  RPC_ERRORS,
  type ClientMethods,
  type InitializeResult,
  type ProviderInfo,
} from '@dsh/sdk-protocol'
import { SessionError } from '@dsh/session'
import { SessionView } from '@dsh/session-view'
import type { SessionQuery } from '@dsh/session-query'
import { foldTitle } from '@dsh/session-admin'
import { RpcError, invalidParams, requestFailed } from './errors.ts'
import type { McpServerConfig } from '@dsh/mcp'
import { directory, parseRoute, toBlocks, type RouteInput } from './params.ts'
import type { Config } from './config.ts'
import type {} from '@dsh/usage-prices'
import { sessionUsage } from '@dsh/usage-kit'
import { applyAgentModes, checkAgentPreset, setPlanMode } from './agent-modes.ts'
import { checkClientTools, registerClientTools, type AskClient } from './client-tools.ts'
import { logToolFilter } from './tool-filter.ts'

type Params<M extends keyof ClientMethods> = ClientMethods[M]['params']
type Result<M extends keyof ClientMethods> = Promise<ClientMethods[M]['result']>

/** What the method table needs from the server that owns the connection. */
export interface MethodHost {
  ctx: Context
  config: Config
  /** Called by `initialize`: registers the approval answerer when the client can answer. */
  initialized(approvals: boolean): void
  /** Called by `shutdown`: cancels, drains and flushes; resolves once the logs are durable. */
  drain(): Promise<void>
  /** Sends a request to the client (a client tool's call). */
  callClient: AskClient
}

/**
 * The client's requests (the spec is @dsh/sdk-protocol's README). Params arrive checked against the
 * protocol's schemas (server.ts); each method adds the checks a schema cannot make and works through
 * ctx.agents and ctx.sessions only; typed refusals keep their code.
 */
export class Methods {
  constructor(private readonly host: MethodHost) {}

  private get ctx() {
    return this.host.ctx
  }

  async initialize(params: Params<'initialize'>): Result<'initialize'> {
    // Answer only once every row has mounted: providers register their adapters as they come up.
    await (this.ctx.get('loader') as { await?(): Promise<void> } | undefined)?.await?.()
    const approvals = params.capabilities?.approvals === true
    this.host.initialized(approvals)
    const result: InitializeResult = {
      protocolVersion: PROTOCOL_VERSION,
      serverInfo: { name: 'dsh', version: this.ctx.app.version, profile: this.ctx.app.profile },
      capabilities: { approvals, permissionPresets: !!this.presets() },
      providers: await this.providers(),
      cwd: this.ctx.app.cwd,
      limits: { maxLineBytes: this.host.config.maxLineBytes },
    }
    return result
  }

  async 'session/new'(params: Params<'session/new'>): Result<'session/new'> {
    const cwd = directory(params.cwd, 'cwd') ?? this.ctx.app.cwd
    const route = parseRoute(params.route, 'route')
    const { permission, systemPrompt } = params
    const presets = permission === undefined ? undefined : this.requirePresets()
    if (presets && permission) this.checkPreset(presets, permission, 'permission')
    if (route?.provider) this.checkProvider(route.provider, 'route')
    if (params.agentPreset !== undefined) checkAgentPreset(this.ctx, params.agentPreset)
    const servers = this.mcpServers(params.mcpServers)
    if (params.tools?.length) checkClientTools(this.ctx, params.tools)
    const agent = await this.ctx.agents.create({ cwd, ...(systemPrompt !== undefined ? { systemPrompt } : {}) })
    if (servers.length) this.ctx.get('mcp')!.attach(agent.session, servers)
    if (params.tools?.length)
      registerClientTools(this.ctx, agent, params.tools, this.host.callClient, this.host.config.clientToolTimeoutMs)
    logToolFilter(agent.session, params)
    if (route) agent.setRoute(this.completeRoute(agent, route))
    if (presets && permission) this.applyPreset(presets, agent, permission, 'permission')
    applyAgentModes(this.ctx, agent, params)
    return { sessionId: agent.session.id, length: agent.session.length }
  }

  /** The program's MCP servers, checked before any session exists (none without an `mcp` row: refused by name). */
  private mcpServers(servers: Params<'session/new'>['mcpServers']): McpServerConfig[] {
    if (!servers || !Object.keys(servers).length) return []
    const mcp = this.ctx.get('mcp')
    if (!mcp) throw invalidParams('mcpServers', 'needs an MCP client, and this composition mounts none (row "mcp")')
    try {
      return mcp.parse(servers, 'sdk', 'session/new mcpServers')
    } catch (error) {
      throw invalidParams('mcpServers', (error as Error).message)
    }
  }

  async 'session/prompt'(params: Params<'session/prompt'>): Result<'session/prompt'> {
    const blocks = toBlocks(params.content)
    const { sessionId } = params
    const agent =
      sessionId === undefined
        ? await this.ctx.agents.create({ cwd: this.ctx.app.cwd })
        : await this.openOrCreate(sessionId)
    logToolFilter(agent.session, params)
    // The step limit of this prompt's turn (the loop reads it at every step; absent: the setting alone).
    agent.maxSteps = params.maxSteps
    const messageId = agent.followup(blocks)
    return { sessionId: agent.session.id, messageId }
  }

  async 'session/cancel'(params: Params<'session/cancel'>): Result<'session/cancel'> {
    const agent = this.openAgent(params.sessionId)
    const wasRunning = agent.running
    agent.cancel('cancelled by the SDK client')
    return { wasRunning }
  }

  async 'session/resume'(params: Params<'session/resume'>): Result<'session/resume'> {
    const { sessionId } = params
    const route = parseRoute(params.route, 'route')
    if (route?.provider) this.checkProvider(route.provider, 'route')
    const agent = await this.ctx.agents.resume(sessionId).catch(notFoundAs('sessionId'))
    if (route) agent.setRoute(this.completeRoute(agent, route))
    return { sessionId: agent.session.id, length: agent.session.length }
  }

  async 'session/fork'(params: Params<'session/fork'>): Result<'session/fork'> {
    const { sessionId, atSeq } = params
    const route = parseRoute(params.route, 'route')
    if (route?.provider) this.checkProvider(route.provider, 'route')
    const agent = await this.ctx.agents.fork(sessionId, atSeq).catch(notFoundAs('sessionId'))
    if (route) agent.setRoute(this.completeRoute(agent, route))
    return { sessionId: agent.session.id, length: agent.session.length }
  }

  async 'session/list'(params: Params<'session/list'>): Result<'session/list'> {
    const { cwd } = params
    const sessions = await this.ctx.sessions.list()
    return { sessions: cwd === undefined ? sessions : sessions.filter((session) => session.cwd === cwd) }
  }

  async 'session/search'(params: Params<'session/search'>): Result<'session/search'> {
    const { query, cwd } = params
    const limit = params.limit ?? this.host.config.searchLimit
    if (limit > this.host.config.maxSearchLimit)
      throw invalidParams('limit', `must be at most ${this.host.config.maxSearchLimit} (the runtime's maxSearchLimit)`)
    // Search is an optional row of the composition: without it the method says so rather than vanishing.
    const search = this.ctx.get('sessionQuery') as SessionQuery | undefined
    if (!search)
      throw requestFailed('SEARCH_UNAVAILABLE', 'session search is not mounted in this runtime (no session-query row)')
    return { hits: await search.search(query, { limit, ...(cwd !== undefined ? { cwd } : {}) }) }
  }

  async 'session/events'(params: Params<'session/events'>): Result<'session/events'> {
    const { sessionId, fromSeq = 0 } = params
    const limit = params.limit ?? this.host.config.pageSize
    if (limit > this.host.config.maxPageSize)
      throw invalidParams('limit', `must be at most ${this.host.config.maxPageSize} (the runtime's maxPageSize)`)
    const { events } = await this.ctx.sessions.read(sessionId).catch(notFoundAs('sessionId'))
    const page = events.slice(fromSeq, fromSeq + limit)
    const next = fromSeq + page.length
    return {
      events: page as ClientMethods['session/events']['result']['events'],
      nextSeq: next < events.length ? next : null,
      length: events.length,
    }
  }

  async 'session/setModel'(params: Params<'session/setModel'>): Result<'session/setModel'> {
    const agent = this.openAgent(params.sessionId)
    const input = parseRoute(params.route, 'route')!
    if (input.provider) this.checkProvider(input.provider, 'route')
    const route = this.completeRoute(agent, input)
    agent.setRoute(route)
    return { route }
  }

  async 'session/setPermission'(params: Params<'session/setPermission'>): Result<'session/setPermission'> {
    const agent = this.openAgent(params.sessionId)
    const { preset } = params
    const presets = this.requirePresets()
    this.checkPreset(presets, preset, 'preset')
    this.applyPreset(presets, agent, preset, 'preset')
    return { preset }
  }

  async 'session/setPlanMode'(params: Params<'session/setPlanMode'>): Result<'session/setPlanMode'> {
    return { active: setPlanMode(this.ctx, this.openAgent(params.sessionId), params.active) }
  }

  async 'session/commands'(params: Params<'session/commands'>): Result<'session/commands'> {
    const agent = this.openAgent(params.sessionId)
    return { commands: (await this.requireCommands().list(agent.cwd)).map((command) => ({ ...command })) }
  }

  /**
   * Runs a slash command as the user typed it. A user command's prompt is queued as the user's message (its
   * turn's events follow as notifications); an unknown `/word` runs and sends nothing (`unknown` names it).
   */
  async 'session/command'(params: Params<'session/command'>): Result<'session/command'> {
    const agent = this.openAgent(params.sessionId)
    const outcome = await this.requireCommands().run(agent, params.line)
    if (!outcome.handled) return { handled: false, ...(outcome.unknown ? { unknown: outcome.unknown } : {}) }
    if ('error' in outcome) return { handled: true, name: outcome.name, error: outcome.error }
    const messageId =
      outcome.prompt !== undefined ? agent.followup([{ type: 'text', text: outcome.prompt }]) : undefined
    return {
      handled: true,
      name: outcome.name,
      output: outcome.output,
      ...(messageId ? { messageId } : {}),
      ...(outcome.sessionId ? { newSessionId: outcome.sessionId } : {}),
    }
  }

  /** The files a session changed, with their diffs (the same review as `dsh sessions diff`); a stored session need not be open. */
  async 'session/changes'(params: Params<'session/changes'>): Result<'session/changes'> {
    const changes = this.ctx.get('sessionChanges')
    if (!changes)
      throw requestFailed('CHANGES_UNAVAILABLE', 'this runtime mounts no session-changes row (ctx.sessionChanges)')
    return changes.changes(params.sessionId, params.fromTurn !== undefined ? { fromTurn: params.fromTurn } : {})
  }

  /** Restores the session's files to their state before a turn (logged as `rewind/done`, actor `client:sdk`). */
  async 'session/rewind'(params: Params<'session/rewind'>): Result<'session/rewind'> {
    const checkpoints = this.ctx.get('checkpoints')
    if (!checkpoints)
      throw requestFailed('REWIND_UNAVAILABLE', 'this runtime mounts no checkpoints row (ctx.checkpoints)')
    const agent = this.ctx.agents.bySession(params.sessionId) ?? (await this.ctx.agents.resume(params.sessionId))
    if (agent.running)
      throw requestFailed(
        'SESSION_BUSY',
        `session ${params.sessionId} is running a turn: cancel it, then rewind`,
        'sessionId',
      )
    return checkpoints.rewind(agent.session, {
      toTurn: params.toTurn,
      force: !!params.force,
      fork: !!params.fork,
      actor: 'client:sdk',
    })
  }

  /** What the session's requests used and cost from `fromSeq` on: `@dsh/usage-kit` over the log, priced by `ctx.usagePrices`. */
  async 'session/usage'(params: Params<'session/usage'>): Result<'session/usage'> {
    const live = this.ctx.sessions.get(params.sessionId)
    const events = live
      ? live.events
      : (await this.ctx.sessions.read(params.sessionId).catch(notFoundAs('sessionId'))).events
    return sessionUsage(events, this.ctx.get('usagePrices')?.table() ?? {}, params.fromSeq ?? 0)
  }

  /**
   * What the session shows, folded by @dsh/session-view (the fold web, ACP and headless use), so a client in
   * another language reads the same items instead of folding the log its own way. A session nobody runs is
   * settled: a call left without its result shows interrupted, as the web shows it.
   */
  async 'session/view'(params: Params<'session/view'>): Result<'session/view'> {
    const live = this.ctx.sessions.get(params.sessionId)
    const events = live
      ? live.events
      : (await this.ctx.sessions.read(params.sessionId).catch(notFoundAs('sessionId'))).events
    const view = SessionView.fold(events)
    if (!this.ctx.agents.bySession(params.sessionId)?.running) view.settle()
    const fromSeq = params.fromSeq ?? 0
    return {
      sessionId: params.sessionId,
      items: view.items.filter((item) => item.seq >= fromSeq),
      todos: view.todos ?? [],
      length: events.length,
    }
  }

  /** Names a session as its user chose (`session/title`, source `user`): `ctx.sessionAdmin`, open here or stored. */
  async 'session/rename'(params: Params<'session/rename'>): Result<'session/rename'> {
    await this.requireAdmin().rename(params.sessionId, params.title)
    const { events } = await this.ctx.sessions.read(params.sessionId)
    let named: ReturnType<typeof foldTitle> = {}
    for (const event of events)
      if ((event.type as string) === 'session/title')
        named = foldTitle(named, event.data as Parameters<typeof foldTitle>[1])
    return { title: named.title ?? params.title }
  }

  /**
   * Deletes a stored session with its subagent children (`ctx.sessionAdmin`): an idle agent of this runtime is
   * let go first; refused while a turn runs (`SESSION_RUNNING`) or another process holds one (`SESSION_LOCKED`).
   */
  async 'session/delete'(params: Params<'session/delete'>): Result<'session/delete'> {
    return { deleted: await this.requireAdmin().delete(params.sessionId) }
  }

  async shutdown(): Result<'shutdown'> {
    await this.host.drain()
    return {}
  }

  private requireAdmin() {
    const admin = this.ctx.get('sessionAdmin')
    if (!admin) throw requestFailed('ADMIN_UNAVAILABLE', 'this runtime mounts no session-admin row (ctx.sessionAdmin)')
    return admin
  }

  private async providers(): Promise<ProviderInfo[]> {
    return Promise.all(
      this.ctx.llm.providers().map(async (provider) => {
        try {
          return { provider, models: await this.ctx.llm.adapter(provider).models() }
        } catch (error) {
          return { provider, models: [], error: error instanceof Error ? error.message : String(error) }
        }
      }),
    )
  }

  /** An agent of this runtime, or a stored session resumed; an id nobody knows starts a new session. */
  private async openOrCreate(sessionId: string): Promise<Agent> {
    const live = this.ctx.agents.bySession(sessionId)
    if (live) return live
    try {
      return await this.ctx.agents.resume(sessionId)
    } catch (error) {
      if (error instanceof SessionError && error.code === 'SESSION_NOT_FOUND')
        return this.ctx.agents.create({ cwd: this.ctx.app.cwd })
      throw error
    }
  }

  private requireCommands() {
    const commands = this.ctx.get('commands')
    if (!commands) throw requestFailed('COMMANDS_UNAVAILABLE', 'this runtime mounts no commands row (ctx.commands)')
    return commands
  }

  private openAgent(sessionId: string): Agent {
    const agent = this.ctx.agents.bySession(sessionId)
    if (!agent)
      throw requestFailed(
        'SESSION_NOT_OPEN',
        `session ${sessionId} is not open in this runtime (open it with session/new, session/resume or session/fork)`,
        'sessionId',
      )
    return agent
  }

  private checkProvider(provider: string, field: string): void {
    const mounted = this.ctx.llm.providers()
    if (!mounted.includes(provider))
      throw invalidParams(
        `${field}.provider`,
        `names no mounted model provider ("${provider}"; mounted: ${mounted.join(', ') || 'none'})`,
      )
  }

  /** A bare model keeps the session's provider (a new session's is the runtime's default). */
  private completeRoute(agent: Agent, input: RouteInput): Route {
    const provider = input.provider ?? agent.route.provider
    return { provider, model: input.model, ...(input.effort ? { effort: input.effort } : {}) }
  }

  /** Refuses an unknown preset before anything is created or logged. */
  private checkPreset(presets: PermissionPresets, name: string, field: string): void {
    try {
      presets.get(name)
    } catch (error) {
      throw requestFailed(
        error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'UNKNOWN_PRESET',
        error instanceof Error ? error.message : String(error),
        field,
      )
    }
  }

  private presets(): PermissionPresets | undefined {
    return this.ctx.get('permissionPresets') as PermissionPresets | undefined
  }

  private requirePresets(): PermissionPresets {
    const presets = this.presets()
    if (!presets)
      throw requestFailed(
        'PERMISSION_PRESETS_UNAVAILABLE',
        'no permission presets row is mounted in this runtime, so a preset cannot be chosen',
      )
    return presets
  }

  private applyPreset(presets: PermissionPresets, agent: Agent, name: string, field: string): void {
    try {
      presets.set(agent.session, name, 'client:sdk')
    } catch (error) {
      throw requestFailed(
        error instanceof Error && 'code' in error && typeof error.code === 'string'
          ? error.code
          : 'PERMISSION_PRESET_REFUSED',
        error instanceof Error ? error.message : String(error),
        field,
      )
    }
  }
}

/** A session that does not exist is a parameter naming nothing: say which one. */
function notFoundAs(field: string) {
  return (error: unknown): never => {
    if (error instanceof SessionError && error.code === 'SESSION_NOT_FOUND')
      throw requestFailed('SESSION_NOT_FOUND', error.message, field)
    throw error
  }
}

export const METHOD_NOT_FOUND = (method: string) =>
  new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `Method not found: "${method}"`, { method })
