// Actors and grant rules (docs/architecture.md, "Authority"): pure, shared by the authority plugins,
// the surfaces and the audit.
export {
  AUTHORITY_ACTORS,
  UNKNOWN_ACTOR,
  actorOf,
  actorProblem,
  assertActor,
  isActor,
  type AuthorityActor,
} from './actors.ts'
export { RULE_KINDS, RuleError, parseRule, ruleProblem, type Rule, type RuleKind } from './rule.ts'
export { splitCommand, splitCommandWords, suggestCommandPattern } from './shell.ts'
export { checkEditedRule, suggestRule } from './suggest.ts'
export {
  evaluateRules,
  isCommandKind,
  ruleMatches,
  type RuleEffect,
  type RuleSet,
  type RuleSubject,
  type Verdict,
} from './match.ts'
