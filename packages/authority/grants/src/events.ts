import type { GrantScope } from '@dsh/approval'
import { AUTHORITY_ACTORS, ruleProblem, type AuthorityActor } from '@dsh/authority-rules'
import { agrees, oneOf, Type, type Same, type Static } from '@dsh/session'

// Each grant kind's type and its check are one TypeBox schema (issue #28.6); the rule's grammar is checked
// after the shape by `ruleProblem`, which names what is wrong with it.
const GRANT_SCOPES = ['session', 'workspace'] as const
const scope = oneOf(GRANT_SCOPES)
const actor = oneOf(AUTHORITY_ACTORS)
agrees<Same<(typeof GRANT_SCOPES)[number], GrantScope>>(true)
agrees<Same<(typeof AUTHORITY_ACTORS)[number], AuthorityActor>>(true)

/** A standing grant: a rule an approval answer (or `ctx.grants.add`) allowed, for a session or a workspace. */
export const GrantData = Type.Object({
  /** `g-` and 8 hex digits; `dsh grants revoke <id>` names it. */
  id: Type.String(),
  rule: Type.String(),
  scope,
  actor,
  /** The approval request it answered, when it came from one. */
  requestId: Type.Optional(Type.String()),
})
export type Grant = Static<typeof GrantData>

/** A grant of this session revoked (a session grant stops applying from here on). */
export const GrantRevokedData = Type.Omit(GrantData, ['requestId'])

/**
 * A grants.yaml entry of this session's workspace that dsh did not write (no valid integrity tag): never
 * applied. `claimedActor` is what the entry says, not who wrote it.
 */
export const GrantIgnoredData = Type.Object({
  id: Type.String(),
  rule: Type.String(),
  claimedActor: Type.String(),
  reason: Type.String(),
})

/** After the shape: the rule must parse (`data.rule: …`). */
export const grantRuleProblem = (data: { rule: string }): string | undefined => ruleProblem(data.rule, 'data.rule')

declare module '@dsh/session' {
  interface SessionEventMap {
    /** A grant made in this session: a `session` one is in force for it; a `workspace` one is kept in grants.yaml. */
    'grant/added': Grant
    'grant/revoked': Static<typeof GrantRevokedData>
    'grant/ignored': Static<typeof GrantIgnoredData>
  }
}
