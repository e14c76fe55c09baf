import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ToolListChangedNotificationSchema,
  type GetPromptResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { McpError, type McpServerConfig } from '@dsh/mcp'
import { ToolError } from '@dsh/tools'
import { allPages } from './pages.ts'
import type { McpCallResult, McpProgress } from './results.ts'

export interface ConnectionOptions {
  initializeTimeoutMs: number
  callTimeoutMs: number
  /** Pages of one listing before the server is taken for broken (an endless cursor chain). */
  maxListPages: number
  restartBackoffMs: number
  restartBackoffMaxMs: number
  clientVersion: string
  /** A fresh transport for each start (a stdio server: a new child, confined and with its environment). */
  openTransport(): Promise<{ transport: Transport; diagnostics: () => string }>
  /** The tool list after a start or a `list_changed` notification. */
  onTools(tools: Tool[], reason: 'connected' | 'restarted' | 'list_changed'): void
  /** A failed start (`crashed` false) or an exit of a running server (`crashed` true). */
  onExit(message: string, crashed: boolean): void
}

type State =
  | { kind: 'idle' }
  | { kind: 'starting'; ready: Promise<void> }
  | { kind: 'ready'; client: Client }
  | { kind: 'dead'; at: number; message: string }

/** An error's message with its causes' (fetch says only "fetch failed"; a cause names the proxy's refusal). */
const withCause = (error: Error): string => {
  let text = error.message
  for (let cause = error.cause; cause instanceof Error; cause = cause.cause)
    if (!text.includes(cause.message)) text += `: ${cause.message}`
  return text
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => (signal.removeEventListener('abort', stop), resolve()), ms)
    const stop = () => (clearTimeout(timer), reject(signal.reason))
    signal.addEventListener('abort', stop, { once: true })
  })

/**
 * One MCP server for one agent: started on demand, with `initialize` bounded by a deadline; an exit while
 * in use is reported to the caller as a typed tool error, and the next call restarts it after a backoff
 * that doubles with each consecutive failure (capped) and resets once a start succeeds.
 */
export class ServerConnection {
  private state: State = { kind: 'idle' }
  private failures = 0
  private starts = 0
  private closed = false
  /** The tools/list a list_changed notification started: a call the change came with waits for it. */
  private refreshing: Promise<void> = Promise.resolve()

  constructor(
    readonly server: McpServerConfig,
    private readonly options: ConnectionOptions,
  ) {}

  get ready(): boolean {
    return this.state.kind === 'ready'
  }

  /** Starts the server unless it runs; after a failure, waits out the backoff first (abortable). */
  async ensure(signal: AbortSignal): Promise<Client> {
    if (this.closed)
      throw new ToolError('MCP_SERVER_FAILED', `MCP server "${this.server.name}" is stopped (its agent ended)`)
    if (this.state.kind === 'ready') return this.state.client
    if (this.state.kind === 'dead') {
      const wait = this.state.at + this.backoff() - Date.now()
      if (wait > 0) await sleep(wait, signal)
    }
    if (this.state.kind !== 'starting') {
      const ready = this.start()
      this.state = { kind: 'starting', ready }
      ready.catch(() => {})
    }
    await (this.state as { ready: Promise<void> }).ready
    const now = this.current()
    if (now.kind !== 'ready') throw new ToolError('MCP_SERVER_FAILED', this.deadMessage())
    return now.client
  }

  /**
   * Calls a tool. With `onProgress` the request carries a progress token (the SDK adds it) and each progress
   * notification the server sends restarts the call's timeout: a long call that keeps telling its progress
   * is working, and the tools pipeline's own timeout still bounds it.
   */
  async call(
    tool: string,
    args: unknown,
    signal: AbortSignal,
    onProgress?: (progress: McpProgress) => void,
  ): Promise<McpCallResult> {
    return this.use(`the call of ${tool}`, signal, async (client) => {
      const result = (await client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        {
          signal,
          timeout: this.options.callTimeoutMs,
          ...(onProgress ? { onprogress: onProgress, resetTimeoutOnProgress: true } : {}),
        },
      )) as McpCallResult
      // A server announces a change before the result of the call that made it: the next request sees it.
      await this.refreshing
      return result
    })
  }

  /** Whether the running server offers resources (its `initialize` answer says so). */
  get offersResources(): boolean {
    return this.state.kind === 'ready' && !!this.state.client.getServerCapabilities()?.resources
  }

  /** Every resource the server lists (all pages), started on demand like a call. */
  listResources(signal: AbortSignal): Promise<Resource[]> {
    return this.use('listing its resources', signal, (client) =>
      this.pages('resources', async (cursor) => {
        const page = await client.listResources(cursor ? { cursor } : {}, {
          signal,
          timeout: this.options.callTimeoutMs,
        })
        return { items: page.resources, nextCursor: page.nextCursor }
      }),
    )
  }

  get callTimeoutMs(): number {
    return this.options.callTimeoutMs
  }

  /** Whether the running server offers prompts (its `initialize` answer says so). */
  get offersPrompts(): boolean {
    return this.state.kind === 'ready' && !!this.state.client.getServerCapabilities()?.prompts
  }

  /** Every prompt the server lists (all pages). */
  prompts(signal: AbortSignal): Promise<Prompt[]> {
    return this.use('listing its prompts', signal, (client) =>
      this.pages('prompts', async (cursor) => {
        const page = await client.listPrompts(cursor ? { cursor } : {}, { signal, timeout: this.options.callTimeoutMs })
        return { items: page.prompts, nextCursor: page.nextCursor }
      }),
    )
  }

  prompt(name: string, args: Record<string, string>, signal: AbortSignal): Promise<GetPromptResult> {
    return this.use(`getting the prompt ${name}`, signal, (client) =>
      client.getPrompt({ name, arguments: args }, { signal, timeout: this.options.callTimeoutMs }),
    )
  }

  /** The tools the running server lists now (all pages). */
  tools(signal: AbortSignal): Promise<Tool[]> {
    return this.use('listing its tools', signal, (client) => this.listTools(client))
  }

  readResource(uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
    return this.use(`reading ${uri}`, signal, (client) =>
      client.readResource({ uri }, { signal, timeout: this.options.callTimeoutMs }),
    )
  }

  /** Runs one request on the running server (starting it first); a failure is a typed tool error naming the server. */
  private async use<T>(what: string, signal: AbortSignal, request: (client: Client) => Promise<T>): Promise<T> {
    let client: Client
    try {
      client = await this.ensure(signal)
    } catch (error) {
      if (error instanceof ToolError || signal.aborted) throw error
      throw new ToolError('MCP_SERVER_FAILED', (error as Error).message)
    }
    try {
      return await request(client)
    } catch (error) {
      if (signal.aborted) throw error
      if (this.state.kind !== 'ready' || this.state.client !== client)
        throw new ToolError('MCP_SERVER_FAILED', `${this.deadMessage()}; the outcome of ${what} is unknown`)
      throw new ToolError(
        'MCP_SERVER_FAILED',
        `MCP server "${this.server.name}" failed ${what}: ${(error as Error).message}`,
      )
    }
  }

  async close(): Promise<void> {
    this.closed = true
    const state = this.state
    this.state = { kind: 'idle' }
    if (state.kind === 'starting') await state.ready.catch(() => {})
    const after = this.current()
    const client = after.kind === 'ready' ? after.client : state.kind === 'ready' ? state.client : undefined
    this.state = { kind: 'idle' }
    await client?.close().catch(() => {})
  }

  /** The state as it is now (an await may have changed it: read it again rather than trust a narrowing). */
  private current(): State {
    return this.state
  }

  private backoff(): number {
    return Math.min(
      this.options.restartBackoffMs * 2 ** Math.max(0, this.failures - 1),
      this.options.restartBackoffMaxMs,
    )
  }

  private deadMessage(): string {
    return this.state.kind === 'dead' ? this.state.message : `MCP server "${this.server.name}" is not running`
  }

  private async start(): Promise<void> {
    const name = this.server.name
    const reason = this.starts++ === 0 ? 'connected' : 'restarted'
    const { transport, diagnostics } = await this.options.openTransport().catch((error: Error) => {
      this.fail(`MCP server "${name}" could not be started: ${error.message}`)
      throw error
    })
    const client = new Client({ name: 'dsh', version: this.options.clientVersion }, { capabilities: {} })
    let live = false
    // The MCP SDK's Client is no EventTarget: `onclose` is its only close callback.
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    client.onclose = () => {
      if (!live || this.closed) return
      live = false
      const detail = diagnostics()
      this.fail(`MCP server "${name}" exited${detail ? `: ${detail}` : ''}; it is restarted on the next call`, true)
    }
    try {
      await client.connect(transport, { timeout: this.options.initializeTimeoutMs })
    } catch (error) {
      await client.close().catch(() => {})
      const timedOut = (error as { code?: number }).code === -32001
      const detail = diagnostics()
      const message = timedOut
        ? `MCP server "${name}" did not answer initialize within ${this.options.initializeTimeoutMs} ms${detail ? ` (stderr: ${detail})` : ''}`
        : `MCP server "${name}" failed to initialize: ${withCause(error as Error)}${detail ? ` (stderr: ${detail})` : ''}`
      this.fail(message)
      throw new McpError(timedOut ? 'MCP_INIT_TIMEOUT' : 'MCP_SERVER_FAILED', message)
    }
    if (this.closed) return void (await client.close().catch(() => {}))
    live = true
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      const refresh = async () => {
        const now = this.current()
        if (now.kind === 'ready' && now.client === client)
          this.options.onTools(await this.listTools(client), 'list_changed')
      }
      this.refreshing = refresh().catch((error: Error) =>
        this.options.onExit(`MCP server "${name}" changed its tools but could not list them: ${error.message}`, false),
      )
    })
    let tools: Tool[]
    try {
      tools = await this.listTools(client)
    } catch (error) {
      live = false
      await client.close().catch(() => {})
      const message = `MCP server "${name}" failed to list its tools: ${(error as Error).message}`
      this.fail(message)
      throw new McpError('MCP_SERVER_FAILED', message)
    }
    this.failures = 0
    this.state = { kind: 'ready', client }
    this.options.onTools(tools, reason)
  }

  private fail(message: string, crashed = false) {
    this.failures++
    this.state = { kind: 'dead', at: Date.now(), message }
    this.options.onExit(message, crashed)
  }

  private async listTools(client: Client): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) return []
    return this.pages('tools', async (cursor) => {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.options.initializeTimeoutMs })
      return { items: page.tools, nextCursor: page.nextCursor }
    })
  }

  private pages<T>(
    what: string,
    fetch: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
  ): Promise<T[]> {
    return allPages(this.server.name, what, this.options.maxListPages, fetch)
  }
}
