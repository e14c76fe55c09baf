import { AUTHORITY_ACTORS } from '@dsh/authority-rules'
import { SANDBOX_MODES, type SandboxProbe } from '@dsh/sandbox'
import { agrees, checkShape, oneOf, Type, type Same, type Static } from '@dsh/session'

// Each sandbox-policy kind's type and its check are one TypeBox schema (issue #28.6).
const mode = oneOf(SANDBOX_MODES)
const actor = oneOf(AUTHORITY_ACTORS)

/** The sandbox mode in force from this event on (set directly or by a permission preset), and who chose it. */
export const SandboxModeData = Type.Object({ mode, actor })
/** Logs written before actors were recorded hold none (the audit shows `unknown`); the mode is checked as on append. */
const StoredSandboxModeData = Type.Object({ mode, actor: Type.Optional(actor) })
export const storedModeProblem = (data: unknown): string | undefined => checkShape(StoredSandboxModeData, data, 'data')

/**
 * The most this session may ever run under (a subagent's parent authority, docs/security.md): every mode in force
 * is clamped to the lowest ceiling of the log, and a session with ceilings but no `sandbox/mode` runs at it.
 * A ceiling only lowers, so it names no actor; `why` says whose authority it is (`subagent of <session>`).
 */
export const SandboxCeilingData = Type.Object({ mode, why: Type.String({ minLength: 1 }) })

/** What the confinement backend of this process could do when the session first needed it (@dsh/sandbox's `SandboxProbe`). */
export const SandboxProbeData = Type.Object({
  backend: Type.String(),
  available: Type.Boolean(),
  reason: Type.String(),
  executable: Type.Optional(Type.String()),
})
agrees<Same<Static<typeof SandboxProbeData>, SandboxProbe>>(true)

declare module '@dsh/session' {
  interface SessionEventMap {
    'sandbox/mode': Static<typeof SandboxModeData>
    'sandbox/ceiling': Static<typeof SandboxCeilingData>
    'sandbox/probe': Static<typeof SandboxProbeData>
  }
}
