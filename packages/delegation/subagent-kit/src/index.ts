// What the subagent providers share (docs/architecture.md, "Subagents").
export { ChildAgents, ChildConfig } from './children.ts'
export { AgentTypeError, BUILT_IN_TYPES, loadAgentTypes, parseAgentFile } from './agent-types.ts'
export { ceilingRefusal, type GuardConfig } from './guard.ts'
export { Slots } from './slots.ts'
