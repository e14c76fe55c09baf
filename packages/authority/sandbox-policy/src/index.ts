// The authority in force for a session (DESIGN §8; docs/architecture.md, "Execution world").
export { SandboxPolicy, SandboxPolicy as default, type Config } from './policy.ts'
export { resolveWritableRoots } from './roots.ts'
export type {} from './events.ts'
