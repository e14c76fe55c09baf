import { existsSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join } from 'node:path'
import type { PathRule } from '@dsh/sandbox'
import { ruleProblem } from '@dsh/sandbox-rules'

/** A rule that cannot be applied, naming it and where it was written. Fail loud: no authority is derived. */
export class PathRuleError extends Error {
  override name = 'PathRuleError'
  readonly code = 'SANDBOX_INVALID_RULE'
}

/** What a written rule's `~`, `$DSH_HOME` and relative forms mean for one session. */
export interface RuleBases {
  home: string
  dshHome: string
  /** Real directories a relative rule is taken under (the session's cwd, then the writable roots). */
  roots: string[]
}

const GLOB_CHARS = /[*?[\]{}]/

/**
 * The real path of the part before the first glob segment, where it exists; the rest appended as written.
 * `existsSync` first and the native realpath: a missing path throws no error, which made this most of an
 * authority's cost (docs/performance.md).
 */
export function realPrefix(pattern: string): string {
  const segments = pattern.split('/')
  const firstGlob = segments.findIndex((segment) => GLOB_CHARS.test(segment))
  const literal = (firstGlob === -1 ? segments : segments.slice(0, firstGlob)).join('/') || '/'
  const rest = firstGlob === -1 ? [] : segments.slice(firstGlob)
  let real: string
  try {
    if (!existsSync(literal)) return pattern
    real = realpathSync.native(literal)
  } catch {
    return pattern
  }
  return rest.length ? join(real, ...rest) : real
}

/** The absolute patterns one written rule stands for (before real paths: a relative rule gives one per root). */
function expandWritten(written: string, bases: RuleBases): string[] {
  const rule = written.trim().replace(/(.)\/+$/, '$1')
  if (rule === '~' || rule.startsWith('~/')) return [bases.home + rule.slice(1)]
  if (rule === '$DSH_HOME' || rule.startsWith('$DSH_HOME/')) return [bases.dshHome + rule.slice('$DSH_HOME'.length)]
  if (isAbsolute(rule)) return [rule]
  return bases.roots.map((root) => join(root, rule))
}

/**
 * Resolves written rules (`~/.ssh`, `$DSH_HOME`, `/etc/shadow`, `.git`, `*.pem`) into absolute patterns, the
 * lexical form and the real one when they differ, so a link to a secret folder is covered either way.
 * Throws PathRuleError naming the rule and `source` when one cannot be a rule. `reals`, when given, records
 * each lexical pattern's real form, so a memo can tell whether the disk still gives the same rules.
 */
export function resolveRules(
  written: readonly string[],
  bases: RuleBases,
  source: string,
  reals?: Map<string, string>,
): PathRule[] {
  const rules: PathRule[] = []
  const seen = new Set<string>()
  for (const rule of written) {
    if (typeof rule !== 'string' || !rule.trim()) throw new PathRuleError(`${source}: an empty path rule`)
    // Checked as written: joining a relative rule to a root would fold ".." away.
    if (rule.split('/').some((segment) => segment === '.' || segment === '..'))
      throw new PathRuleError(`${source}: the path rule "${rule}" cannot be applied: it contains "." or ".." segments`)
    for (const lexical of expandWritten(rule, bases)) {
      const problem = ruleProblem(lexical)
      if (problem) throw new PathRuleError(`${source}: the path rule "${rule}" cannot be applied: ${problem}`)
      const real = realPrefix(lexical)
      reals?.set(lexical, real)
      for (const pattern of [lexical, real]) {
        if (seen.has(pattern)) continue
        seen.add(pattern)
        rules.push({ rule, pattern, ...(/\/(\*\*)?\/?$/.test(rule.trim()) ? { directory: true } : {}) })
      }
    }
  }
  return rules
}

/** The real path of `path` as far as it exists, the missing rest appended (a folder made later is where it will be). */
export function realPathOf(path: string): string {
  const missing: string[] = []
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(realpathSync(at), ...missing.reverse())
    } catch {
      if (dirname(at) === at) return path
      missing.push(basename(at))
    }
  }
}

/** The user's home as rules see it (the `HOME` of this process). */
export const currentHome = () => homedir()
