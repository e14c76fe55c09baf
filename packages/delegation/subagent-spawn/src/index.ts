// Subagents on fresh sessions (docs/architecture.md, "Subagents").
import type { Agent } from '@dsh/agent'
import type { Route } from '@dsh/llm'
import type { SubagentKind } from '@dsh/subagent'
import { ChildAgents, ChildConfig } from '@dsh/subagent-kit'

export type Config = ChildConfig

/** A child starts on a new, empty session in its parent's working directory: it sees only its task. */
export default class SubagentSpawn extends ChildAgents {
  static Config = ChildConfig
  readonly kind: SubagentKind = 'spawn'

  protected open(parent: Agent, _request: unknown, _type: unknown, route: Route): Promise<Agent> {
    return this.ctx.agents.create({ cwd: parent.cwd, parent, route })
  }
}
