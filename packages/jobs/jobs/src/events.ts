import { SANDBOX_MODES } from '@dsh/sandbox'
import { oneOf, Type, type Static } from '@dsh/session'

// Each job kind's type and its check are one TypeBox schema (issue #28.6).

/** Why a job stopped: it ended by itself, the model killed it (`job_kill`), or its session (or dsh) ended. */
export const JOB_END_REASONS = ['exited', 'killed', 'session-ended'] as const
export type JobEndReason = (typeof JOB_END_REASONS)[number]

const text = Type.String({ minLength: 1 })
const count = Type.Integer({ minimum: 0 })

/** A background command was started by the tool call `callId` (logged before the call's result). */
export const JobStartedData = Type.Object({
  jobId: text,
  callId: text,
  command: text,
  cwd: text,
  /** The sandbox mode it runs under for its whole life. */
  mode: oneOf(SANDBOX_MODES),
  pid: count,
  /** Where its whole output is kept (readable by the model's `read`), when the spill store keeps files. */
  logPath: Type.Optional(text),
})
export type JobStarted = Static<typeof JobStartedData>

/** A job stopped. `outputChars`: all it printed. */
export const JobEndedData = Type.Object({
  jobId: text,
  reason: oneOf(JOB_END_REASONS),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([text, Type.Null()]),
  outputChars: count,
})
export type JobEnded = Static<typeof JobEndedData>

/** A job this log started that no process holds any more (dsh stopped without ending it): found on resume. */
export const JobLostData = Type.Object({ jobId: text })
export type JobLost = Static<typeof JobLostData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'job/started': JobStarted
    'job/ended': JobEnded
    'job/lost': JobLost
  }
}
