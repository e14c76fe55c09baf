import type { EnvPolicy, ScrubbedEnvironment } from '@dsh/env-policy'

/** The environment policy a session's commands run under, by name only: a value is never logged. */
export interface EnvPolicyRecord {
  /** Names inherited from dsh's environment. */
  inherited: string[]
  /** Names the `shell.env.set` setting adds. */
  set: string[]
  /** The `shell.env.include` and `shell.env.exclude` patterns. */
  include: string[]
  exclude: string[]
  /** Names in dsh's environment withheld as secret-looking or excluded. */
  dropped: string[]
}

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The environment policy in force for the session's commands from here on (names and patterns only). */
    'shell/env-policy': EnvPolicyRecord
  }
}

const FIELDS = ['inherited', 'set', 'include', 'exclude', 'dropped'] as const

export function policyRecord(policy: EnvPolicy, scrubbed: ScrubbedEnvironment): EnvPolicyRecord {
  return { inherited: scrubbed.inherited, set: Object.keys(policy.set).sort(), include: [...policy.include], exclude: [...policy.exclude], dropped: scrubbed.dropped }
}

/** The problem with a logged record, or undefined (a record holds lists of names, nothing else). */
export function checkRecord(data: any): string | undefined {
  if (typeof data !== 'object' || data === null) return 'an environment policy record is an object'
  for (const field of FIELDS) {
    if (!Array.isArray(data[field]) || data[field].some((name: unknown) => typeof name !== 'string')) return `${field} must be a list of names`
  }
  const extra = Object.keys(data).find((key) => !(FIELDS as readonly string[]).includes(key))
  return extra ? `unexpected field "${extra}" (a record holds names only)` : undefined
}
