import type { SandboxMode } from '@dsh/sandbox'

/** Why a job stopped: it ended by itself, the model killed it (`job_kill`), or its session (or dsh) ended. */
export const JOB_END_REASONS = ['exited', 'killed', 'session-ended'] as const
export type JobEndReason = (typeof JOB_END_REASONS)[number]

/** A background command was started by the tool call `callId` (logged before the call's result). */
export interface JobStarted {
  jobId: string
  callId: string
  command: string
  cwd: string
  /** The sandbox mode it runs under for its whole life. */
  mode: SandboxMode
  pid: number
  /** Where its whole output is kept (readable by the model's `read`), when the spill store keeps files. */
  logPath?: string
}

/** A job stopped. `outputChars`: all it printed. */
export interface JobEnded {
  jobId: string
  reason: JobEndReason
  exitCode: number | null
  signal: string | null
  outputChars: number
}

/** A job this log started that no process holds any more (dsh stopped without ending it): found on resume. */
export interface JobLost {
  jobId: string
}

declare module '@dsh/session' {
  interface SessionEventMap {
    'job/started': JobStarted
    'job/ended': JobEnded
    'job/lost': JobLost
  }
}

const isText = (value: unknown) => typeof value === 'string' && value.length > 0
const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0

export function jobStartedProblem(data: any): string | undefined {
  if (![data?.jobId, data?.callId, data?.command, data?.cwd, data?.mode].every(isText)) return 'jobId, callId, command, cwd and mode must be non-empty strings'
  if (!isCount(data.pid)) return 'pid must be a natural number'
  return data.logPath === undefined || isText(data.logPath) ? undefined : 'logPath must be a non-empty string'
}

export function jobEndedProblem(data: any): string | undefined {
  if (!isText(data?.jobId)) return 'jobId must be a non-empty string'
  if (!(JOB_END_REASONS as readonly unknown[]).includes(data.reason)) return `reason must be one of ${JOB_END_REASONS.join(', ')}`
  if (!(data.exitCode === null || Number.isInteger(data.exitCode)) || !(data.signal === null || isText(data.signal))) return 'exitCode must be an integer or null, signal a string or null'
  return isCount(data.outputChars) ? undefined : 'outputChars must be a natural number'
}

export const jobLostProblem = (data: any): string | undefined => (isText(data?.jobId) ? undefined : 'jobId must be a non-empty string')
