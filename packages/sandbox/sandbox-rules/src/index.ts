export { coveringRule, expandRule, ruleBase, ruleProblem, within } from './match.ts'
export { hiddenByPrivateTmp } from './private-tmp.ts'
