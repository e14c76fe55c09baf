import type { GrantScope } from '@dsh/approval'
import type { AuthorityActor } from '@dsh/authority-rules'

/** A standing grant: a rule an approval answer (or `ctx.grants.add`) allowed, for a session or a workspace. */
export interface Grant {
  /** `g-` and 8 hex digits; `dsh grants revoke <id>` names it. */
  id: string
  rule: string
  scope: GrantScope
  actor: AuthorityActor
  /** The approval request it answered, when it came from one. */
  requestId?: string
}

declare module '@dsh/session' {
  interface SessionEventMap {
    /** A grant made in this session: a `session` one is in force for it; a `workspace` one is kept in grants.yaml. */
    'grant/added': Grant
    /** A grant of this session revoked (a session grant stops applying from here on). */
    'grant/revoked': { id: string; rule: string; scope: GrantScope; actor: AuthorityActor }
    /**
     * A grants.yaml entry of this session's workspace that dsh did not write (no valid integrity tag): never
     * applied. `claimedActor` is what the entry says, not who wrote it.
     */
    'grant/ignored': { id: string; rule: string; claimedActor: string; reason: string }
  }
}
