// The authority in force for a session (docs/architecture.md, "Execution world").
export {
  DEFAULT_DENY_READ,
  DEFAULT_HOME_PROTECT,
  DEFAULT_PROTECT,
  HOME_WARNING,
  SandboxPolicy,
  SandboxPolicy as default,
  type Config,
} from './policy.ts'
export { PathRuleError, resolveRules, type RuleBases } from './paths.ts'
export { resolveWritableRoots } from './roots.ts'
export type {} from './events.ts'
