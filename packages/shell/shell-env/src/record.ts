import { Type, type Static } from '@dsh/session'
import type { EnvPolicy, ScrubbedEnvironment } from '@dsh/env-policy'

const names = Type.Array(Type.String())

/**
 * The environment policy a session's commands run under, by name only: a value is never logged, and a record
 * holds no other field. Its type and its check (issue #28.6).
 */
export const EnvPolicyRecordData = Type.Object(
  {
    /** Names inherited from dsh's environment. */
    inherited: names,
    /** Names the `shell.env.set` setting adds. */
    set: names,
    /** The `shell.env.include` and `shell.env.exclude` patterns. */
    include: names,
    exclude: names,
    /** Names in dsh's environment withheld as secret-looking or excluded. */
    dropped: names,
  },
  { additionalProperties: false, fieldIs: 'field of an environment policy record' },
)
export type EnvPolicyRecord = Static<typeof EnvPolicyRecordData>

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The environment policy in force for the session's commands from here on (names and patterns only). */
    'shell/env-policy': EnvPolicyRecord
  }
}

export function policyRecord(policy: EnvPolicy, scrubbed: ScrubbedEnvironment): EnvPolicyRecord {
  return {
    inherited: scrubbed.inherited,
    set: Object.keys(policy.set).sort(),
    include: [...policy.include],
    exclude: [...policy.exclude],
    dropped: scrubbed.dropped,
  }
}
