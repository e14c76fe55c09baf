import { existsSync, readdirSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, join, normalize, sep } from 'node:path'
import picomatch from 'picomatch'
import type { PathRule } from '@dsh/sandbox'

// Pure helpers over path rules, shared by every place that enforces them (the fs fence, the bubblewrap
// arguments, the policy that resolves them) so a rule means the same thing everywhere.

const GLOB_CHARS = /[*?[\]{}]/

/** The pattern without a trailing `/**`: a rule covers what it matches and everything beneath. */
export function ruleBase(pattern: string): string {
  const base = pattern.replace(/(\/\*\*)+\/?$/, '')
  return base === '' ? '/' : base
}

/** Why `pattern` (absolute) cannot be a rule, or undefined when it can. */
export function ruleProblem(pattern: string): string | undefined {
  if (!isAbsolute(pattern)) return 'it is not an absolute path (write /…, ~/…, or $DSH_HOME/…)'
  const segments = ruleBase(pattern).split('/')
  if (segments.includes('..') || segments.includes('.')) return 'it contains "." or ".." segments'
  if (segments.some((segment) => segment.includes('**')))
    return '"**" may only end a rule (a rule already covers everything beneath it)'
  if (ruleBase(pattern) === '/') return 'it covers the whole file system'
  return undefined
}

const matchers = new Map<string, (path: string) => boolean>()
function matcherOf(base: string): (path: string) => boolean {
  let matcher = matchers.get(base)
  if (!matcher) {
    const test = GLOB_CHARS.test(base) ? picomatch(base, { dot: true }) : (path: string) => path === base
    matcher = (path) => test(path)
    matchers.set(base, matcher)
  }
  return matcher
}

/** The first rule covering `path` (absolute, normalized): its pattern matches the path or one of its ancestors. */
export function coveringRule(rules: readonly PathRule[] | undefined, path: string): PathRule | undefined {
  if (!rules?.length) return undefined
  const clean = normalize(path)
  for (const rule of rules) {
    const matches = matcherOf(ruleBase(rule.pattern))
    for (let at = clean; ; at = dirname(at)) {
      if (matches(at)) return rule
      if (dirname(at) === at) break
    }
  }
  return undefined
}

/** Whether `path` is `dir` or lies beneath it. */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep)
}

const segmentMatchers = new Map<string, (name: string) => boolean>()
const segmentMatcher = (segment: string) => {
  let matcher = segmentMatchers.get(segment)
  if (!matcher) segmentMatchers.set(segment, (matcher = picomatch(segment, { dot: true })))
  return matcher
}

/**
 * The real paths of what a rule's pattern matches now, expanded one segment at a time (so only the
 * directories on the way are listed), at most `limit` of them; `missing` is the pattern itself when it has no
 * glob and nothing is there. For a confinement backend that must name concrete paths (bubblewrap mounts).
 */
export function expandRule(pattern: string, limit: number): { found: string[]; missing?: string } {
  const segments = ruleBase(pattern).split('/').filter(Boolean)
  let current = ['/']
  for (const segment of segments) {
    const next: string[] = []
    for (const dir of current) {
      if (!GLOB_CHARS.test(segment)) {
        next.push(join(dir, segment))
        continue
      }
      let names: string[]
      try {
        names = readdirSync(dir)
      } catch {
        continue
      }
      const matches = segmentMatcher(segment)
      for (const name of names) if (matches(name)) next.push(join(dir, name))
    }
    current = next.slice(0, limit)
  }
  const found = new Set<string>()
  for (const path of current) {
    // Most candidates are missing (a protected name not made yet): a look first, no error thrown and caught;
    // the native realpath, one system call (bubblewrap is asked this for every rule of every command).
    if (!existsSync(path)) continue // missing: nothing there to hide or to fence
    try {
      found.add(realpathSync.native(path))
    } catch {
      // removed in between: nothing there
    }
  }
  const base = ruleBase(pattern)
  return { found: [...found].slice(0, limit), ...(!found.size && !GLOB_CHARS.test(base) ? { missing: base } : {}) }
}
