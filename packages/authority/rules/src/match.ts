import { isAbsolute, relative, sep } from 'node:path'
import picomatch from 'picomatch'
import type { Rule, RuleKind } from './rule.ts'
import { splitCommand, splitCommandWords } from './shell.ts'

/**
 * What one call or request would do, as rules see it. `value` is the command (bash, unconfined, writegit), the real
 * absolute path (write, edit), the host (network) or the digest of hook commands (hooks); `cwd` is the session's workspace (real path), against
 * which relative path patterns are read.
 */
export interface RuleSubject {
  kind: RuleKind
  value: string
  cwd?: string
}

/** Whether a kind's pattern is a command (read part by part for allow rules). */
export const isCommandKind = (kind: RuleKind): boolean =>
  kind === 'bash' || kind === 'unconfined' || kind === 'writegit'

export type RuleEffect = 'deny' | 'ask' | 'allow'

export interface RuleSet {
  deny: readonly Rule[]
  ask: readonly Rule[]
  allow: readonly Rule[]
}

export interface Verdict {
  effect: RuleEffect
  rule: Rule
}

const escape = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')

/** `*` matches anything; a final ` *` also matches nothing (so `npm test *` matches `npm test`). */
function commandRegex(pattern: string): RegExp {
  const open = pattern.endsWith(' *')
  const body = open ? pattern.slice(0, -2) : pattern
  const source = body.split('*').map(escape).join('.*')
  return new RegExp(`^${source}${open ? '(?: .*)?' : ''}$`, 's')
}

/** A command pattern against one simple command (words joined by one space). */
const partMatches = (pattern: string, part: string) => commandRegex(pattern).test(part)

/**
 * An allow pattern against one simple command's words: the joined words match, and the pattern's literal
 * head (`git commit` of `git commit *`) is the command's leading words one for one, so a quoted word holding
 * a space (`'git commit' -m x`, a program of that name) or a program that merely starts like one (`gitx`) is
 * not taken for them (docs/security.md, "Standing grants").
 */
function partAllows(pattern: string, words: readonly string[]): boolean {
  if (!commandRegex(pattern).test(words.join(' '))) return false
  const head = pattern.split('*')[0]!
  const whole = head.split(' ')
  // The last piece of the head is a word's beginning unless the head ends at a word's end (a space, or no `*`).
  const partial = pattern.includes('*') && !head.endsWith(' ') ? whole.pop()! : undefined
  if (head.endsWith(' ')) whole.pop()
  return (
    whole.every((word, i) => words[i] === word) &&
    (partial === undefined || (words[whole.length] ?? '').startsWith(partial))
  )
}

function commandMatches(rule: Rule, command: string, effect: RuleEffect): boolean {
  const whole = command.trim()
  // An exact rule (no `*`) is the command the user saw, character for character.
  if (!rule.pattern.includes('*')) {
    if (rule.pattern === whole) return true
    if (effect === 'allow') return false
  }
  if (effect === 'allow') {
    const words = splitCommandWords(whole)
    return !!words && words.every((part) => partAllows(rule.pattern, part))
  }
  const parts = splitCommand(whole)
  // deny and ask: any part is enough, and what cannot be split is searched for the pattern's literal head.
  if (parts) return parts.some((part) => partMatches(rule.pattern, part))
  const head = rule.pattern.split('*')[0]!.trim()
  return head === '' || whole.includes(head)
}

function pathMatches(rule: Rule, path: string, cwd: string | undefined): boolean {
  const options = { dot: true }
  if (isAbsolute(rule.pattern)) return picomatch(rule.pattern, options)(path)
  if (!cwd) return false
  const inside = relative(cwd, path)
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return false
  return picomatch(rule.pattern, options)(inside.split(sep).join('/'))
}

const hostMatches = (rule: Rule, host: string) =>
  picomatch(rule.pattern.toLowerCase(), { dot: true })(host.toLowerCase())

/** Whether a rule covers a subject, read for the effect it has (allow rules read compound commands strictly). */
export function ruleMatches(rule: Rule, subject: RuleSubject, effect: RuleEffect): boolean {
  if (rule.kind !== subject.kind) return false
  switch (rule.kind) {
    case 'bash':
    case 'unconfined':
    case 'writegit':
      return commandMatches(rule, subject.value, effect)
    case 'write':
    case 'edit':
      return pathMatches(rule, subject.value, subject.cwd)
    case 'network':
      return hostMatches(rule, subject.value)
    case 'hooks':
      return rule.pattern === subject.value // a digest: never a pattern
    case 'mcp':
      return picomatch(rule.pattern)(subject.value)
    case 'mcpserver':
      return rule.pattern === subject.value
  }
}

/**
 * An allow verdict for a command: an exact rule equal to the whole command, or every simple command of it
 * matched by some allow rule (not necessarily the same one). What cannot be split is allowed by no pattern.
 */
function allowCommand(allow: readonly Rule[], subject: RuleSubject): Rule | undefined {
  const rules = allow.filter((rule) => rule.kind === subject.kind)
  const whole = subject.value.trim()
  const exact = rules.find((rule) => rule.pattern === whole)
  if (exact) return exact
  const parts = splitCommandWords(whole)
  if (!parts) return undefined
  const matched = parts.map((part) => rules.find((rule) => partAllows(rule.pattern, part)))
  return matched.every(Boolean) ? matched[0] : undefined
}

/** Rules in force, evaluated deny > ask > allow: the first effect with a matching rule, else undefined. */
export function evaluateRules(rules: RuleSet, subject: RuleSubject): Verdict | undefined {
  for (const effect of ['deny', 'ask'] as const) {
    const rule = rules[effect].find((candidate) => ruleMatches(candidate, subject, effect))
    if (rule) return { effect, rule }
  }
  const rule = isCommandKind(subject.kind)
    ? allowCommand(rules.allow, subject)
    : rules.allow.find((candidate) => ruleMatches(candidate, subject, 'allow'))
  return rule ? { effect: 'allow', rule } : undefined
}
