import { DEFAULT_INHERITED, isSecretName, NAME_GLOB, nameMatcher, VARIABLE_NAME } from './names.ts'

/** What the user adds to the default environment policy (the `shell.env.*` settings). */
export interface EnvPolicy {
  /** Names or globs inherited from dsh's environment beyond DEFAULT_INHERITED. */
  include: string[]
  /** Names or globs never passed on, whoever names them. */
  exclude: string[]
  /** Variables set for every command, by name. A secret-looking name is refused (see checkEnvPolicy). */
  set: Record<string, string>
}

export const EMPTY_POLICY: EnvPolicy = Object.freeze({ include: [], exclude: [], set: {} }) as EnvPolicy

/** The environment one child gets, and what became of each name (names only: never values). */
export interface ScrubbedEnvironment {
  env: Record<string, string>
  /** Names taken from dsh's environment. */
  inherited: string[]
  /** Names the policy's `set` or the caller added. */
  added: string[]
  /** Names that were offered (by dsh's environment or the caller) and dropped as secret-looking or excluded. */
  dropped: string[]
}

/** The problem with `policy`, or undefined: each pattern a name glob, each `set` name a variable name that does not look secret. */
export function checkEnvPolicy(policy: EnvPolicy): string | undefined {
  for (const [field, patterns] of [
    ['include', policy.include],
    ['exclude', policy.exclude],
  ] as const) {
    const bad = patterns.find((pattern) => typeof pattern !== 'string' || !NAME_GLOB.test(pattern))
    if (bad !== undefined)
      return `${field}: "${String(bad)}" is not a variable name or glob (letters, digits, _, * and ? only)`
  }
  for (const name of Object.keys(policy.set)) {
    if (!VARIABLE_NAME.test(name)) return `set: "${name}" is not a variable name`
    if (isSecretName(name))
      return `set: "${name}" looks like a secret (settings are shown in clear and are no place for one); commands never get secret-looking variables`
  }
  return undefined
}

/**
 * The environment of a process the model can start (docs/security.md: commands get a scrubbed environment).
 * From `source` (dsh's own environment) only DEFAULT_INHERITED and `policy.include` are inherited; then
 * `policy.set`, then the caller's `extra` (the caller wins: a persistent shell's empty prompts are its
 * protocol). Exclusion wins over everything offered by name or pattern: a secret-looking or excluded name
 * from `source` or `extra` is dropped even when `include` or the caller names it. `set` is refused a
 * secret-looking name up front (checkEnvPolicy) and wins over `exclude`: it is a value the user wrote.
 */
export function scrubEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  policy: EnvPolicy,
  extra: Readonly<Record<string, string | undefined>> = {},
): ScrubbedEnvironment {
  const problem = checkEnvPolicy(policy)
  if (problem) throw new TypeError(`environment policy: ${problem}`)
  const inheritable = nameMatcher([...DEFAULT_INHERITED, ...policy.include])
  const excluded = nameMatcher(policy.exclude)
  const blocked = (name: string) => isSecretName(name) || excluded(name)
  const env: Record<string, string> = {}
  const inherited: string[] = []
  const added = new Set<string>()
  const dropped = new Set<string>()
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || !inheritable(name)) continue
    if (blocked(name)) dropped.add(name)
    else {
      env[name] = value
      inherited.push(name)
    }
  }
  for (const [name, value] of Object.entries(policy.set)) {
    env[name] = value
    added.add(name)
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) continue
    if (blocked(name)) dropped.add(name)
    else {
      env[name] = value
      added.add(name)
    }
  }
  for (const name of Object.keys(source)) if (isSecretName(name) && source[name] !== undefined) dropped.add(name)
  return { env, inherited: inherited.sort(), added: [...added].sort(), dropped: [...dropped].sort() }
}
