import { dirname, isAbsolute, relative, sep } from 'node:path'
import { evaluateRules, isCommandKind, type RuleSubject } from './match.ts'
import { parseRule, RuleError, type Rule } from './rule.ts'
import { suggestCommandPattern } from './shell.ts'

const GLOB_SPECIAL = /[*?[\]{}()!+@]/

/**
 * The rule an "allow for the session / always" answer offers for a subject — the one suggestion every
 * surface gets (the web card shows it for editing; ACP, the SDK and the terminal store it as offered): a
 * command's program and subcommand (`bash(git commit *)`), or the exact command when it is compound, runs
 * another program (`sh`, `npx`, `env`) or cannot be split; a path's directory (`write(docs/**)`; a file at the
 * workspace root gives the file itself; outside the workspace, the absolute directory). Undefined when no
 * safe rule can be written (a multi-line command, a path with glob characters).
 */
export function suggestRule(subject: RuleSubject): string | undefined {
  if (isCommandKind(subject.kind)) {
    const pattern = suggestCommandPattern(subject.value)
    return pattern ? `${subject.kind}(${pattern})` : undefined
  }
  if (subject.kind === 'write' || subject.kind === 'edit') {
    if (GLOB_SPECIAL.test(subject.value)) return undefined
    const inside = subject.cwd ? relative(subject.cwd, subject.value) : '..'
    if (!inside.startsWith('..') && !isAbsolute(inside)) {
      const dir = dirname(inside)
      return `${subject.kind}(${dir === '.' ? inside.split(sep).join('/') : `${dir.split(sep).join('/')}/**`})`
    }
    return `${subject.kind}(${dirname(subject.value)}/**)`
  }
  return `${subject.kind}(${subject.value})`
}

/**
 * A rule a person wrote in place of the suggestion, checked before it is kept: it must parse and must allow
 * the very call being approved (read as an allow rule, so a compound command needs the rule to cover every
 * part). Returns the normalized rule, or throws RuleError saying what is wrong.
 */
export function checkEditedRule(text: unknown, subject: RuleSubject): Rule {
  const rule = parseRule(text, 'the edited rule')
  if (rule.kind !== subject.kind)
    throw new RuleError(
      `the edited rule ${rule.text} is a ${rule.kind}(…) rule, but this call needs a ${subject.kind}(…) rule`,
    )
  if (evaluateRules({ deny: [], ask: [], allow: [rule] }, subject)?.effect !== 'allow')
    throw new RuleError(
      `the edited rule ${rule.text} does not cover this call (${subject.value}); widen it or keep the suggested one`,
    )
  return rule
}
