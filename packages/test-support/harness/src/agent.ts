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
  /** The logged result of the tool call `callId` (fails the test when the log has none). */
  toolResult(callId: string): SessionEvent<'tool/result'>['data']
  /** The text blocks of that result, joined. */
  toolText(callId: string): string
}

export function agentHarness(h: Harness): AgentHarness {
  let agent: Agent | undefined
  const get = async () => (agent ??= await h.root.agents.create({ cwd: h.workspace }))
  const events = <K extends EventKind>(type?: K) => {
    const all = (agent?.session.events ?? []) as AnySessionEvent[]
    return (type ? all.filter((event) => event.type === type) : all) as SessionEvent<K>[]
  }
  const toolResult = (callId: string) => {
    const result = events('tool/result').find((event) => event.data.callId === callId)
    if (!result) throw new Error(`no tool/result for call ${callId} in the log`)
    return result.data
  }
  return {
    agent: get,
    async run(prompt) {
      const a = await get()
      a.followup(prompt)
      return (await a.whenIdle())!
    },
    events,
    types: () => (agent?.session.events ?? []).map((event) => event.type),
    toolResult,
    toolText: (callId) =>
      toolResult(callId)
        .content.map((block) => (block.type === 'text' ? block.text : ''))
        .join(''),
  }
}
