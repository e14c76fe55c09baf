import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'

/**
 * Agents the web app opened are let go once nobody uses them: idle, no approval waiting, and no tab
 * subscribed to their session for `idleMs`. Disposing flushes the log and frees its writer lease, so a
 * terminal can `dsh resume` the session while the web app runs; the next message resumes it here.
 */
export class IdleRelease {
  /** Sessions whose agent the web app opened (created, forked or resumed); only these are released. */
  private readonly opened = new Set<string>()
  private readonly tabs = new Map<string, number>()
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>()
  /** Releases under way: a message arriving meanwhile waits for the lease before resuming. */
  private readonly releasing = new Map<string, Promise<void>>()

  constructor(
    private readonly ctx: Context,
    private readonly idleMs: number,
    private readonly approvalsWaiting: (sessionId: string) => number,
  ) {
    ctx.effect(
      () => () => {
        for (const timer of this.timers.values()) clearTimeout(timer)
        this.timers.clear()
      },
      'web idle release timers',
    )
    ctx.on('agent/status', (agent, status) => {
      if (status === 'disposed') this.opened.delete(agent.session.id)
      this.consider(agent.session.id)
    })
  }

  /** The agent of `sessionId`, live or resumed; waits for a release of it that is under way. */
  async agentFor(sessionId: string): Promise<Agent> {
    await this.releasing.get(sessionId)
    return this.adopt(this.ctx.agents.bySession(sessionId) ?? (await this.ctx.agents.resume(sessionId)))
  }

  /** Counts `agent` as opened by the web app, so it is released when unused. */
  adopt(agent: Agent): Agent {
    this.opened.add(agent.session.id)
    this.consider(agent.session.id)
    return agent
  }

  /** A tab subscribed to `sessionId`; the returned function unsubscribes it. */
  subscribed(sessionId: string): () => void {
    this.tabs.set(sessionId, (this.tabs.get(sessionId) ?? 0) + 1)
    this.consider(sessionId)
    return () => {
      const left = (this.tabs.get(sessionId) ?? 1) - 1
      if (left > 0) this.tabs.set(sessionId, left)
      else this.tabs.delete(sessionId)
      this.consider(sessionId)
    }
  }

  /** Starts the countdown when `sessionId`'s agent became unused, stops it when it is used again. */
  consider(sessionId: string): void {
    const timer = this.timers.get(sessionId)
    if (timer) clearTimeout(timer)
    this.timers.delete(sessionId)
    if (!this.unused(sessionId)) return
    const next = setTimeout(() => {
      this.timers.delete(sessionId)
      if (this.unused(sessionId)) this.release(this.ctx.agents.bySession(sessionId)!)
    }, this.idleMs)
    next.unref?.()
    this.timers.set(sessionId, next)
  }

  private unused(sessionId: string): boolean {
    if (this.idleMs === 0 || !this.opened.has(sessionId) || this.tabs.has(sessionId) || this.releasing.has(sessionId))
      return false
    const agent = this.ctx.agents.bySession(sessionId)
    return !!agent && agent.status === 'idle' && this.approvalsWaiting(sessionId) === 0
  }

  private release(agent: Agent): void {
    const sessionId = agent.session.id
    this.opened.delete(sessionId)
    const done = agent
      .dispose()
      .catch((error) =>
        this.ctx.logger('web-sessions').warn('releasing the idle agent of %s failed: %s', sessionId, error),
      )
      .finally(() => this.releasing.delete(sessionId))
    this.releasing.set(sessionId, done)
  }
}
