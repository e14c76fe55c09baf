import type { AuthorityActor } from '@dsh/authority-rules'
import type { SandboxMode, SandboxProbe } from '@dsh/sandbox'

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The sandbox mode in force from this event on (set directly or by a permission preset). */
    'sandbox/mode': {
      mode: SandboxMode
      /** Who chose it (absent in logs written before actors were recorded: the audit shows `unknown`). */
      actor: AuthorityActor
    }
    /** What the confinement backend of this process could do when the session first needed it. */
    'sandbox/probe': SandboxProbe
  }
}
