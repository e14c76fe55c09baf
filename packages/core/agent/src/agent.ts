import { randomUUID } from 'node:crypto'
import type { Context } from '@dsh/cordis'
import type { Route } from '@dsh/llm'
import type { Session } from '@dsh/session'
import {
  toBlocks,
  type AgentStatus,
  type InboxMode,
  type QueuedInput,
  type TurnResult,
  type UserContent,
} from './types.ts'

/** What an agent needs from the service that made it. */
export interface AgentHost {
  ctx: Context
  defaultRoute(): Route
  runTurn(agent: Agent, first: QueuedInput, signal: AbortSignal): Promise<TurnResult>
  disposed(agent: Agent): Promise<void>
}

export interface AgentInit {
  id: string
  session: Session
  scope: Context
  disposeScope: () => Promise<void>
  parent?: Agent
  systemPrompt?: string
  maxSteps?: number
}

/**
 * One agent: a session log, an inbox, a scope, and at most one running turn (docs/architecture.md, "Agents and the turn"). Cancellation by
 * the caller, by the parent and by teardown all go through `cancel()`.
 */
export class Agent {
  readonly id: string
  readonly session: Session
  /** Effects registered here (agent-only tools, timers) end with the agent. */
  readonly scope: Context
  readonly parent: Agent | undefined
  readonly children = new Set<Agent>()
  /** This agent's own step limit per turn (a run option); it replaces the loop's `agent.maxSteps` setting. */
  maxSteps: number | undefined
  status: AgentStatus = 'idle'
  lastResult: TurnResult | undefined

  private readonly queues: Record<InboxMode, QueuedInput[]> = { followup: [], steer: [], inject: [] }
  private turn: AbortController | undefined
  private idleWaiters: (() => void)[] = []
  private readonly disposeScope: () => Promise<void>

  constructor(
    private readonly host: AgentHost,
    init: AgentInit,
  ) {
    this.id = init.id
    this.session = init.session
    this.scope = init.scope
    this.parent = init.parent
    if (init.systemPrompt !== undefined && this.systemPrompt !== init.systemPrompt)
      this.session.append('agent/system-prompt', { text: init.systemPrompt })
    this.maxSteps = init.maxSteps
    this.disposeScope = init.disposeScope
    this.parent?.children.add(this)
  }

  get cwd(): string {
    return this.session.cwd
  }

  /**
   * A whole system prompt for this agent instead of the assembled one (an SDK `systemPrompt`): a logged
   * fact (`agent/system-prompt`), so a resumed session keeps it.
   */
  get systemPrompt(): string | undefined {
    return this.session.last('agent/system-prompt')?.data.text
  }

  /** The route in force: the log's last `model/route`, else the configured default. */
  get route(): Route {
    return this.session.last('model/route')?.data.route ?? this.host.defaultRoute()
  }

  /** Switches the model from the next request on (a logged fact). */
  setRoute(route: Route): void {
    const current = this.session.last('model/route')?.data.route
    if (!current || JSON.stringify(current) !== JSON.stringify(route)) this.session.append('model/route', { route })
  }

  get running(): boolean {
    return this.status === 'running'
  }

  /** Queues a message for the next turn and wakes the agent. Returns a receipt id. */
  followup(content: UserContent): string {
    return this.enqueue('followup', content, true)
  }

  /**
   * Queues a message for the next step (of the running turn, else a new one) and wakes the agent. A steer the
   * running turn no longer takes (it arrived after its last step: during the completion hooks, the title
   * request or `turn/end`) starts the next turn as soon as that one ends (docs/architecture.md, "Agents and the turn").
   */
  steer(content: UserContent): string {
    return this.enqueue(this.running ? 'steer' : 'followup', content, true)
  }

  /** Queues context for the next step without waking the agent. */
  inject(content: UserContent): string {
    return this.enqueue('inject', content, false)
  }

  /** Takes the input the next step may see: steering and injected messages, in arrival order. */
  claimStepInput(): QueuedInput[] {
    const claimed = [...this.queues.steer, ...this.queues.inject]
    this.queues.steer = []
    this.queues.inject = []
    return claimed
  }

  /** Whether a steering message waits (the loop takes another step for it). */
  get steeringWaits(): boolean {
    return this.queues.steer.length > 0
  }

  /**
   * Cancels the running turn (and the children's). Running tools drain; nothing new starts. With `code`
   * `DSH_STOPPED` (@dsh/session) the turn is cut because dsh is stopping and ends `interrupted`, not `aborted`.
   */
  cancel(reason = 'cancelled', code?: string): void {
    this.turn?.abort(Object.assign(new Error(reason), code ? { code } : {}))
    for (const child of this.children) child.cancel(reason, code)
  }

  /** Resolves once no turn runs and no follow-up or steer waits. */
  whenIdle(): Promise<TurnResult | undefined> {
    if (this.status !== 'running' && !this.queues.followup.length && !this.queues.steer.length)
      return Promise.resolve(this.lastResult)
    return new Promise((resolve) => this.idleWaiters.push(() => resolve(this.lastResult)))
  }

  /** Cancels, waits for the turn to end, disposes children and the scope, closes the session. */
  async dispose(): Promise<void> {
    if (this.status === 'disposed') return
    this.queues.followup = []
    this.queues.steer = []
    this.cancel('agent disposed')
    await this.whenIdle()
    await Promise.all([...this.children].map((child) => child.dispose()))
    this.setStatus('disposed')
    this.parent?.children.delete(this)
    await this.disposeScope()
    await this.host.disposed(this)
  }

  private enqueue(mode: InboxMode, content: UserContent, wake: boolean): string {
    if (this.status === 'disposed') throw new Error(`agent ${this.id} is disposed`)
    const messageId = randomUUID()
    this.queues[mode].push({ mode, content: toBlocks(content), messageId })
    if (wake) this.wake()
    return messageId
  }

  private wake(): void {
    if (this.status !== 'idle' || !this.queues.followup.length) return
    this.setStatus('running')
    void this.drive()
  }

  private async drive(): Promise<void> {
    try {
      for (
        let first = this.nextTurnInput();
        first && (this.status as AgentStatus) !== 'disposed';
        first = this.nextTurnInput()
      ) {
        this.turn = new AbortController()
        try {
          this.lastResult = await this.host.runTurn(this, first, this.turn.signal)
        } catch (error) {
          this.lastResult = {
            turnId: '',
            reason: 'error',
            text: '',
            error: { code: 'LOOP_FAILED', message: error instanceof Error ? error.message : String(error) },
          }
          this.host.ctx.logger('agent').error(error)
        } finally {
          this.turn = undefined
        }
      }
    } finally {
      if (this.status === 'running') this.setStatus('idle')
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const resolve of waiters) resolve()
    }
  }

  /**
   * What starts the next turn: a steer the last turn did not take comes first (it was meant for a step that
   * has passed, so it is the most urgent input and must not wait for a later message; issue #28.1), as the
   * turn's user message; the steers behind it join that turn's first step. Else the oldest follow-up.
   */
  private nextTurnInput(): QueuedInput | undefined {
    const steer = this.queues.steer.shift()
    if (steer) return { ...steer, mode: 'followup' }
    return this.queues.followup.shift()
  }

  private setStatus(status: AgentStatus) {
    this.status = status
    this.host.ctx.emit('agent/status', this, status)
  }
}
