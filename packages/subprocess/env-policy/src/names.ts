/**
 * Variable names and name globs. A glob is letters, digits and `_` with `*` (any run) and `?` (one
 * character); nothing else, so a pattern can never mean more than it shows. Matching ignores case: a
 * `my_secret` is as secret as a `MY_SECRET`.
 */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
export const NAME_GLOB = /^[A-Za-z0-9_*?]+$/

/** What every model-started process inherits from dsh's environment unless a pattern drops it. */
export const DEFAULT_INHERITED: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_*',
  'TERM',
  'TZ',
  'SHELL',
  'TMPDIR',
]

/**
 * Names that look like they hold a secret. Always dropped from a model-started process's environment, and
 * their values are redacted from what the model and the log see. The providers' key names
 * (`DEEPSEEK_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`) are covered by `*KEY*`.
 */
export const SECRET_NAME_PATTERNS: readonly string[] = [
  '*KEY*',
  '*TOKEN*',
  '*SECRET*',
  '*PASSWORD*',
  '*PASSWD*',
  '*PASSPHRASE*',
  '*CREDENTIAL*',
  '*_AUTH*',
  'SSH_AUTH_SOCK',
]

/** A predicate for "`name` matches one of `patterns`" (case-insensitive). Throws on a malformed pattern. */
export function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (!patterns.length) return () => false
  for (const pattern of patterns) {
    if (typeof pattern !== 'string' || !NAME_GLOB.test(pattern))
      throw new TypeError(`"${String(pattern)}" is not a variable name or glob (letters, digits, _, * and ? only)`)
  }
  const expression = new RegExp(
    `^(?:${patterns.map((pattern) => pattern.replace(/\*/g, '.*').replace(/\?/g, '.')).join('|')})$`,
    'i',
  )
  return (name) => expression.test(name)
}

const secretName = nameMatcher(SECRET_NAME_PATTERNS)

/** True when `name` looks like it holds a secret (see SECRET_NAME_PATTERNS). */
export function isSecretName(name: string): boolean {
  return secretName(name)
}
