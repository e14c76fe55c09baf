import type { Agent, TurnResult } from '@dsh/agent'
import type { AnySessionEvent, EventKind, SessionEvent } from '@dsh/session'
import type { Harness } from './index.ts'

/** Agent helpers on a booted composition: one agent per harness, prompts run to idle, the log queried. */
export interface AgentHarness {
  /** The harness's agent (created on first use in the temp workspace). */
  agent(): Promise<Agent>
  /** Sends a follow-up and waits until the agent is idle again. */
  run(prompt: string): Promise<TurnResult>
  /** Events of the agent's session, optionally of one kind. */
  events<K extends EventKind>(type?: K): SessionEvent<K>[]
  types(): string[]
}

export function agentHarness(h: Harness): AgentHarness {
  let agent: Agent | undefined
  const get = async () => (agent ??= await h.root.agents.create({ cwd: h.workspace }))
  return {
    agent: get,
    async run(prompt) {
      const a = await get()
      a.followup(prompt)
      return (await a.whenIdle())!
    },
    events<K extends EventKind>(type?: K) {
      const events = (agent?.session.events ?? []) as AnySessionEvent[]
      return (type ? events.filter((event) => event.type === type) : events) as SessionEvent<K>[]
    },
    types: () => (agent?.session.events ?? []).map((event) => event.type),
  }
}
