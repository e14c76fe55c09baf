// Subagents forked from their parent's history (docs/architecture.md, "Subagents").
import type { Agent } from '@dsh/agent'
import type { Context } from '@dsh/cordis'
import type { Route } from '@dsh/llm'
import Schema from '@dsh/schemastery'
import type { SubagentKind, SubagentRequest } from '@dsh/subagent'
import { ChildAgents, ChildConfig } from '@dsh/subagent-kit'
import { forkPoint, seedFork } from './seed.ts'

export interface Config extends ChildConfig {
  delegatedResult: string
  siblingResult: string
}

export const Config: Schema<Partial<Config>, Config> = Schema.intersect([
  ChildConfig,
  Schema.object({
    delegatedResult: Schema.string()
      .default(
        'You are now a subagent forked from this conversation to do one task, given next. Do only that task and end with your findings.',
      )
      .description("The delegating call's result in the child's log (what the forked child reads before its task)."),
    siblingResult: Schema.string()
      .default('(This call runs in the parent conversation; the subagent does not see its result.)')
      .description("The result of the delegating step's other calls in the child's log."),
  }),
]) as Schema<Partial<Config>, Config>

/**
 * A child starts with its parent's history up to the delegating call (docs/architecture.md, "The session log"; docs/architecture.md, "Agents and the turn"): its first request
 * repeats the parent's messages byte for byte, so a provider's prompt cache serves the shared prefix.
 */
export default class SubagentFork extends ChildAgents {
  static Config = Config
  readonly kind: SubagentKind = 'fork'

  constructor(
    ctx: Context,
    private readonly words: Config,
  ) {
    super(ctx, words)
  }

  protected async open(parent: Agent, request: SubagentRequest, _type: unknown, route: Route): Promise<Agent> {
    if (!request.callId) throw new Error('a fork needs the delegating call (callId)')
    const at = forkPoint(parent.session.events, request.callId)
    if (typeof at === 'string') throw new Error(at)
    const words = { delegated: this.words.delegatedResult, sibling: this.words.siblingResult }
    return this.ctx.agents.create({
      cwd: parent.cwd,
      parent,
      route,
      seed: (session) => seedFork(session, parent.session.events, at, request.callId!, words),
    })
  }
}
