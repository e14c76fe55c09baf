import { statSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import {
  PROTOCOL_VERSION,
  type AgentApp,
  type AuthMethod,
  type McpServer,
  type SessionInfo,
} from '@agentclientprotocol/sdk'
import type { Agent } from '@dsh/agent'
import type { Context } from '@dsh/cordis'
import { SessionError } from '@dsh/session'
import type { Route } from '@dsh/llm'
import { MCP_SERVER_NAME, type McpServerConfig } from '@dsh/mcp'
import type { AcpSession } from './acp-session.ts'
import { AcpCommands } from './commands.ts'
import { promptToBlocks } from './content.ts'
import { AcpError, AUTH_FAILURE_CODES, toRequestError } from './errors.ts'
import {
  AGENT_PRESET_OPTION,
  configOptions,
  MODE_OPTION,
  MODEL_OPTION,
  modeState,
  routeFor,
  setAgentPreset,
  setMode,
} from './options.ts'
import type { AcpConnection } from './connection.ts'

/** Runs a handler and sends every failure as a JSON-RPC error that names what was wrong. */
function guarded<P, R>(handler: (params: P) => Promise<R>) {
  return async ({ params }: { params: P }): Promise<R> => {
    try {
      return await handler(params)
    } catch (error) {
      throw toRequestError(error)
    }
  }
}

function checkCwd(cwd: string): string {
  if (!isAbsolute(cwd)) throw new AcpError('CWD_INVALID', `cwd must be an absolute path (got "${cwd}")`)
  let directory = false
  try {
    directory = statSync(cwd).isDirectory()
  } catch {}
  if (!directory) throw new AcpError('CWD_INVALID', `cwd "${cwd}" is not an existing directory`)
  return resolve(cwd)
}

/**
 * The editor's MCP servers as dsh configs (origin `acp`, stdio ones confined, every call asked), checked
 * before any session exists; refused by name when no `mcp` row is mounted.
 */
function editorServers(ctx: Context, servers: McpServer[] | undefined, method: string): McpServerConfig[] {
  if (!servers?.length) return []
  if (!ctx.get('mcp')) {
    const names = servers.map((server) => server.name).join(', ')
    throw new AcpError(
      'MCP_UNSUPPORTED',
      `this dsh composition mounts no MCP client (row "mcp"), so it cannot connect the MCP servers the editor passed (${names})`,
    )
  }
  return servers.map((server): McpServerConfig => {
    if (!MCP_SERVER_NAME.test(server.name))
      throw new AcpError(
        'MCP_INVALID',
        `${method}: MCP server "${server.name}": its name must be 1–48 letters, digits, "-" or "_" (no "__")`,
      )
    const common = { name: server.name, origin: 'acp', source: method, trust: 'ask' } as const
    // The editor passes values, not references: mcp-client uses them as given (no `${VAR}` expansion for acp).
    const pairs = (list: { name: string; value: string }[] | undefined) =>
      Object.fromEntries((list ?? []).map((variable) => [variable.name, variable.value]))
    if ('type' in server && (server.type === 'http' || server.type === 'sse')) {
      if (!/^https?:\/\//.test(server.url))
        throw new AcpError('MCP_INVALID', `${method}: MCP server "${server.name}": url must be an http(s) URL`)
      return { ...common, transport: server.type, url: server.url, headers: pairs(server.headers) }
    }
    const stdio = server as Extract<McpServer, { command: string }>
    if (!stdio.command)
      throw new AcpError('MCP_INVALID', `${method}: MCP server "${server.name}": command must be a non-empty string`)
    return {
      ...common,
      transport: 'stdio',
      command: stdio.command,
      args: [...(stdio.args ?? [])],
      env: pairs(stdio.env),
      sandbox: true,
    }
  })
}

const attachServers = (ctx: Context, agent: Agent, servers: McpServerConfig[]) => {
  if (servers.length) ctx.get('mcp')!.attach(agent.session, servers)
}

/**
 * Registers every ACP method dsh serves on the app (one place to read the whole surface), over one
 * connection: a handler reads and changes only the connection, never the `acp` service (docs/architecture.md,
 * "Surfaces").
 */
export function registerMethods(app: AgentApp, connection: AcpConnection): void {
  const { ctx } = connection
  const commands = new AcpCommands(ctx)
  // After the response that tells the editor the session id, so it knows which session the list is for.
  const announceLater = (session: AcpSession) =>
    void setImmediate(
      () =>
        void commands
          .announce(session)
          .catch((error) => ctx.logger('acp').warn('the commands were not sent: %s', error)),
    )

  const requireReady = async (route: Route) => {
    let adapter
    try {
      adapter = ctx.llm.adapter(route.provider)
    } catch (error) {
      throw new AcpError('MODEL_UNAVAILABLE', (error as Error).message)
    }
    const ready = await adapter.ready?.(route)
    if (ready && !ready.ok) {
      throw new AcpError(
        AUTH_FAILURE_CODES.has(ready.error.code) ? 'AUTH_REQUIRED' : 'MODEL_UNAVAILABLE',
        ready.error.message,
        { provider: route.provider },
      )
    }
  }

  const acceptsImages = (route: Route) => {
    try {
      return ctx.llm.describe(route).images
    } catch {
      return false
    }
  }

  /** Keys missing for mounted providers; none when the default route's own key is present. */
  const authMethods = async (): Promise<AuthMethod[]> => {
    const keys = connection.config.authKeys
    const primary = keys[connection.defaultRoute().provider]
    if (primary && (await ctx.credentials.describe(primary)).set) return []
    const methods: AuthMethod[] = []
    for (const provider of ctx.llm.providers()) {
      const name = keys[provider]
      if (!name || (await ctx.credentials.describe(name)).set) continue
      methods.push({
        id: name,
        name: `${provider} API key`,
        description: `Provide ${name}: ${ctx.credentials.howToSet(name)}`,
      })
    }
    return methods
  }

  /** The session's config options as the editor shows them (mode, model, agent preset). */
  const optionsOf = (session: AcpSession) =>
    configOptions(ctx, connection.catalog, connection.presets, session.agent.session, session.agent.route)

  const sessionState = async (session: AcpSession) => ({
    modes: modeState(connection.presets, session.agent.session, ctx.get('planMode')) ?? null,
    configOptions: await optionsOf(session),
  })

  /** Opens a stored session for this connection, checking it belongs to `cwd`. */
  const openStored = async (sessionId: string, cwd: string): Promise<Agent> => {
    try {
      const { header } = await ctx.sessions.read(sessionId)
      if (resolve(header.cwd) !== cwd)
        throw new AcpError('SESSION_CWD_MISMATCH', `session ${sessionId} belongs to ${header.cwd}, not ${cwd}`)
      return await ctx.agents.resume(sessionId)
    } catch (error) {
      if (error instanceof SessionError) {
        if (error.code === 'SESSION_NOT_FOUND') throw new AcpError('SESSION_UNKNOWN', error.message, { sessionId })
        throw new AcpError('SESSION_UNAVAILABLE', error.message, { sessionId, cause: error.code })
      }
      throw error
    }
  }

  app
    .onRequest(
      'initialize',
      guarded(async (params) => {
        connection.clientCapabilities = params.clientCapabilities ?? {}
        return {
          // dsh speaks ACP v1; a client asking for another version decides whether to go on.
          protocolVersion: PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: {
              image: acceptsImages(connection.defaultRoute()),
              audio: false,
              embeddedContext: true,
            },
            // @dsh/mcp-client speaks streamable HTTP and the legacy SSE transport besides stdio.
            mcpCapabilities: { http: true, sse: true },
            sessionCapabilities: { list: {}, resume: {}, close: {} },
          },
          authMethods: await authMethods(),
          agentInfo: { name: 'dsh', title: 'dsh', version: ctx.app.version },
        }
      }),
    )
    .onRequest(
      'authenticate',
      guarded(async ({ methodId }) => {
        const names = Object.values(connection.config.authKeys)
        if (!names.includes(methodId))
          throw new AcpError(
            'AUTH_METHOD_UNKNOWN',
            `unknown authentication method "${methodId}" (methods: ${names.join(', ')})`,
          )
        // dsh never receives a key over the protocol: the user sets it where credentials live, then retries.
        if (!(await ctx.credentials.describe(methodId)).set)
          throw new AcpError('AUTH_REQUIRED', `${methodId} is still not set: ${ctx.credentials.howToSet(methodId)}`)
        connection.refreshCatalog()
        return {}
      }),
    )
    .onRequest(
      'session/new',
      guarded(async (params) => {
        const cwd = checkCwd(params.cwd)
        const servers = editorServers(ctx, params.mcpServers, 'session/new')
        await requireReady(connection.defaultRoute())
        const agent = await ctx.agents.create({ cwd })
        attachServers(ctx, agent, servers)
        const session = connection.adopt(agent)
        announceLater(session)
        return { sessionId: session.id, ...(await sessionState(session)) }
      }),
    )
    .onRequest(
      'session/load',
      guarded(async (params) => {
        const cwd = checkCwd(params.cwd)
        const servers = editorServers(ctx, params.mcpServers, 'session/load')
        const agent = await openStored(params.sessionId, cwd)
        attachServers(ctx, agent, servers)
        const session = connection.adopt(agent)
        await session.replay()
        announceLater(session)
        return sessionState(session)
      }),
    )
    .onRequest(
      'session/resume',
      guarded(async (params) => {
        const cwd = checkCwd(params.cwd)
        const servers = editorServers(ctx, params.mcpServers, 'session/resume')
        const agent = await openStored(params.sessionId, cwd)
        attachServers(ctx, agent, servers)
        const session = connection.adopt(agent)
        announceLater(session)
        return sessionState(session)
      }),
    )
    .onRequest(
      'session/close',
      guarded(async ({ sessionId }) => {
        const session = connection.session(sessionId)
        connection.forget(sessionId)
        session.cancel()
        await session.agent.dispose()
        return {}
      }),
    )
    .onRequest(
      'session/list',
      guarded(async ({ cwd, cursor }) => {
        const start = cursor ? Number(cursor) : 0
        if (!Number.isInteger(start) || start < 0)
          throw new AcpError('CURSOR_INVALID', `invalid cursor "${cursor}" (pass the nextCursor of a previous page)`)
        const wanted = cwd ? resolve(cwd) : undefined
        // Archived sessions (`session/archived`) are left out: the protocol has no way to ask for them.
        const all = (await ctx.sessions.list())
          .filter((summary) => !summary.archived && (!wanted || resolve(summary.cwd) === wanted))
          .sort((a, b) => b.updatedAt - a.updatedAt)
        const end = start + connection.config.listPageSize
        const sessions: SessionInfo[] = all.slice(start, end).map((summary) => ({
          sessionId: summary.id,
          cwd: summary.cwd,
          title: summary.title ?? summary.firstPrompt ?? null,
          updatedAt: new Date(summary.updatedAt).toISOString(),
        }))
        return { sessions, ...(end < all.length ? { nextCursor: String(end) } : {}) }
      }),
    )
    .onRequest(
      'session/set_mode',
      guarded(async ({ sessionId, modeId }) => {
        const session = connection.session(sessionId)
        setMode(connection.presets, session.agent.session, modeId, ctx.get('planMode'))
        session.send([
          {
            sessionUpdate: 'config_option_update',
            configOptions: await optionsOf(session),
          },
        ])
        return {}
      }),
    )
    .onRequest(
      'session/set_config_option',
      guarded(async (params) => {
        const session = connection.session(params.sessionId)
        const value = String(params.value)
        if (params.configId === MODE_OPTION) {
          setMode(connection.presets, session.agent.session, value, ctx.get('planMode'))
          session.send([{ sessionUpdate: 'current_mode_update', currentModeId: value }])
        } else if (params.configId === MODEL_OPTION) {
          const route = await routeFor(ctx, connection.catalog, value, session.agent.route)
          await requireReady(route)
          session.agent.setRoute(route)
        } else if (params.configId === AGENT_PRESET_OPTION && ctx.get('agentPresets')) {
          setAgentPreset(ctx, session.agent.session, value)
        } else {
          const known = [
            ...(connection.presets ? [MODE_OPTION] : []),
            MODEL_OPTION,
            ...(ctx.get('agentPresets') ? [AGENT_PRESET_OPTION] : []),
          ]
          throw new AcpError(
            'CONFIG_UNKNOWN',
            `unknown config option "${params.configId}" (options: ${known.join(', ')})`,
          )
        }
        return {
          configOptions: await optionsOf(session),
        }
      }),
    )
    .onRequest(
      'session/prompt',
      guarded(async ({ sessionId, prompt }) => {
        const session = connection.session(sessionId)
        const route = session.agent.route
        const content = promptToBlocks(prompt, acceptsImages(route), `${route.provider}/${route.model}`)
        return { stopReason: await commands.prompt(session, content) }
      }),
    )
    .onNotification('session/cancel', ({ params }) => {
      connection.sessions.get(params.sessionId)?.cancel()
    })
}
