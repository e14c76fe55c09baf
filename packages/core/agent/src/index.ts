// Agents and the loop contract (docs/architecture.md, "Agents").
export * from './types.ts'
export type {} from './events.ts'
export { Agent } from './agent.ts'
export { Agents, Agents as default, AgentLoop, type AgentOptions, type CreateOptions, type Config } from './agents.ts'
