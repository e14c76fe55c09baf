import type { SandboxMode, SandboxProbe } from '@dsh/sandbox'

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The sandbox mode in force from this event on (set directly or by a permission preset). */
    'sandbox/mode': { mode: SandboxMode }
    /** What the confinement backend of this process could do when the session first needed it. */
    'sandbox/probe': SandboxProbe
  }
}
