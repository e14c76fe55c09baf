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
    /**
     * The most this session may ever run under (a subagent's parent authority, DESIGN §8): every mode in force
     * is clamped to the lowest ceiling of the log, and a session with ceilings but no `sandbox/mode` runs at it.
     * A ceiling only lowers, so it names no actor; `why` says whose authority it is (`subagent of <session>`).
     */
    'sandbox/ceiling': { mode: SandboxMode; why: string }
    /** What the confinement backend of this process could do when the session first needed it. */
    'sandbox/probe': SandboxProbe
  }
}
