export { coveringRule, expandRule, ruleBase, ruleProblem, within } from './match.ts'
