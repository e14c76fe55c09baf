import { randomUUID } from 'node:crypto'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { EFFORTS, type Route } from '@dsh/llm'
import { Type, type Session, type Static } from '@dsh/session'
import type {} from '@dsh/app'
import { Agent, type AgentHost } from './agent.ts'
import type { QueuedInput, TurnResult } from './types.ts'

/** A whole system prompt chosen for this session (replacing the assembled one from the next request on). */
const SystemPromptData = Type.Object({ text: Type.String() })

declare module '@dsh/session' {
  interface SessionEventMap {
    'agent/system-prompt': Static<typeof SystemPromptData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    agents: Agents
    agentLoop: AgentLoop
  }
}

/**
 * The driver of one turn (docs/architecture.md, "Agents and the turn"), a replaceable plugin: `@dsh/agent-loop` is the shipped one. Owns: the
 * turn/step sequence and its events. Must not own: agent lifecycle or the inbox (ctx.agents).
 */
export abstract class AgentLoop extends Service {
  constructor(ctx: Context) {
    super(ctx, 'agentLoop')
  }
  abstract runTurn(agent: Agent, first: QueuedInput, signal: AbortSignal): Promise<TurnResult>
}

export interface AgentOptions {
  /** A route for a new session (logged as its first `model/route`). */
  route?: Route
  parent?: Agent
  systemPrompt?: string
  /** A step limit per turn for this agent only (e.g. `dsh --max-steps`), in place of the loop's `agent.maxSteps` setting. */
  maxSteps?: number
}

export interface CreateOptions extends AgentOptions {
  cwd: string
  /**
   * Fills the new session before anything else is logged in it (a forked subagent's copy of its parent's
   * history, whose seqs must stay the parent's); the route is logged after it.
   */
  seed?: (session: Session) => void
}

export interface Config {
  route: Route
}

/**
 * Agent handles (D+P; docs/architecture.md, "Agents"). Owns: create, resume, fork, get, list, dispose;
 * each agent's scope; the default route. Must not own: what happens in a turn (ctx.agentLoop).
 */
export class Agents extends Service {
  static inject = ['sessions', 'agentLoop']
  static Config: Schema<Config> = Schema.object({
    route: (
      Schema.object({
        provider: Schema.string().default('deepseek').description('Model provider of new sessions.'),
        model: Schema.string().default('deepseek-v4-flash').description('Model of new sessions.'),
        effort: Schema.union(EFFORTS).description('Reasoning effort, where the model supports it.'),
      }) as Schema<Route>
    )
      .default({ provider: 'deepseek', model: 'deepseek-v4-flash' })
      .description('The route new sessions start on.'),
  })

  private readonly agents = new Map<string, Agent>()
  private readonly resuming = new Map<string, Promise<Agent>>()
  private readonly host: AgentHost

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'agents')
    ctx.sessions.defineKind(ctx, 'agent/system-prompt', { schema: SystemPromptData })
    this.host = {
      ctx,
      defaultRoute: () => this.defaultRoute(),
      runTurn: (agent, first, signal) => this.ctx.agentLoop.runTurn(agent, first, signal),
      disposed: async (agent) => {
        this.agents.delete(agent.id)
        await this.ctx.sessions.close(agent.session.id)
      },
    }
    ctx.effect(() => () => this.disposeAll(), 'dispose agents')
    // Disposal tears every row down at once; draining first lets each turn end and flush while the log and
    // its storage are still up (a cancelled turn is logged `aborted`, never cut off). Registered at launch,
    // after every surface's own `app/draining` listener, so a surface ends its turns its own way first.
    ctx.on('app/launched', () => {
      ctx.on('app/draining', () => this.disposeAll())
    })
  }

  /**
   * The route a new session starts on: what an `agent/default-route` listener names (model-routes: the
   * user's settings), else this row's config. Surfaces use it to check a key before creating anything.
   */
  defaultRoute(): Route {
    return this.ctx.bail('agent/default-route') ?? { ...this.config.route }
  }

  /**
   * A new agent on a new session in `cwd`. A route the caller or a listener chose is logged at once; the
   * row's default is logged by the loop at the first turn (either way the log says which model answered).
   */
  async create(options: CreateOptions): Promise<Agent> {
    const session = await this.ctx.sessions.create({ cwd: options.cwd })
    options.seed?.(session)
    const agent = await this.adopt(session, options)
    const chosen = options.route ?? this.ctx.bail('agent/default-route')
    if (chosen) agent.setRoute(chosen)
    return agent
  }

  /**
   * An agent continuing a stored session (repaired if it crashed). A session has one agent: a caller while it
   * is open, or while another caller is opening it, gets that agent (and its options do not apply).
   */
  async resume(sessionId: string, options: AgentOptions = {}): Promise<Agent> {
    const running = this.bySession(sessionId)
    if (running) return running
    // The open awaits the lease, the load and the agent's scope: a second caller in that time must not open
    // the session again (issue #28.3; the web resumes after an idle release, an SDK client may ask twice).
    const inFlight = this.resuming.get(sessionId)
    if (inFlight) return inFlight
    const resuming = this.open(sessionId, options).finally(() => this.resuming.delete(sessionId))
    this.resuming.set(sessionId, resuming)
    return resuming
  }

  private async open(sessionId: string, options: AgentOptions): Promise<Agent> {
    const agent = await this.adopt(await this.ctx.sessions.resume(sessionId), options)
    if (options.route) agent.setRoute(options.route)
    return agent
  }

  /** An agent on a new session holding events `0..atSeq` of another. */
  async fork(sessionId: string, atSeq: number, options: AgentOptions = {}): Promise<Agent> {
    const agent = await this.adopt(await this.ctx.sessions.fork(sessionId, atSeq), options)
    if (options.route) agent.setRoute(options.route)
    return agent
  }

  get(id: string): Agent | undefined {
    return this.agents.get(id)
  }

  bySession(sessionId: string): Agent | undefined {
    return [...this.agents.values()].find((agent) => agent.session.id === sessionId)
  }

  list(): Agent[] {
    return [...this.agents.values()]
  }

  private async adopt(session: Session, options: AgentOptions): Promise<Agent> {
    const id = randomUUID()
    let scope: Context | undefined
    const fiber = this.ctx.plugin({ name: `agent:${id}`, apply: (inner: Context) => void (scope = inner) })
    await fiber // cordis applies a plugin asynchronously: the scope exists only once its fiber is active
    if (!scope) throw new Error(`agent ${id}: its scope did not start`)
    const agent = new Agent(this.host, {
      id,
      session,
      scope,
      disposeScope: () => fiber.dispose(),
      parent: options.parent,
      systemPrompt: options.systemPrompt,
      maxSteps: options.maxSteps,
    })
    this.agents.set(id, agent)
    this.ctx.emit('agent/created', agent)
    return agent
  }

  private async disposeAll(): Promise<void> {
    await Promise.all([...this.agents.values()].filter((agent) => !agent.parent).map((agent) => agent.dispose()))
  }
}
