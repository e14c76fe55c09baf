import { type Context, Service } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import type { Session } from '@dsh/session'
import type { JobEndReason } from './events.ts'

export type JobStatus = 'running' | JobEndReason | 'lost'

/** One job of a session, as `job_list` shows it. */
export interface JobInfo {
  jobId: string
  command: string
  cwd: string
  status: JobStatus
  pid: number
  startedAt: number
  exitCode: number | null
  signal: string | null
  /** Everything it printed so far. */
  outputChars: number
  logPath?: string
}

export interface JobStartRequest {
  session: Session
  /** The scope the job lives in (the agent's): when it is disposed, the job is killed. */
  scope: Context
  /** The tool call that starts it (logged with `job/started`). */
  callId: string
  command: string
  cwd: string
  /** The authority it runs under for its whole life (confined like a one-shot command). */
  authority: SandboxAuthority
}

export interface JobReadOptions {
  /** The last output whatever was read before (default: only what is new since the last read). */
  tail?: boolean
}

/** Output handed to the model: `text` is raw terminal output; `skippedChars` were neither shown nor kept in memory. */
export interface JobOutput {
  job: JobInfo
  text: string
  /** Unread output not in `text` (cut to the read limit, or gone from memory): the log file has it. */
  skippedChars: number
}

export type JobsErrorCode = 'JOB_NOT_FOUND' | 'JOBS_LIMIT'

export class JobsError extends Error {
  override name = 'JobsError'
  constructor(
    readonly code: JobsErrorCode,
    message: string,
  ) {
    super(message)
  }
}

declare module '@dsh/cordis' {
  interface Context {
    jobs: Jobs
  }
}

/**
 * Background commands of a session (docs/architecture.md, "Background jobs"). Owns: starting a command that
 * outlives its tool call (through ctx.shell, so it is confined and its environment scrubbed like any command),
 * keeping its output (capped in memory, whole in a log file), reading it, killing it, ending every job with
 * its session and with dsh, and logging `job/started`, `job/ended` and (on resume) `job/lost`. Must not own:
 * whether a command may run (approval, the sandbox policy), what the model is told (tool-jobs, the bash tools).
 */
export abstract class Jobs extends Service {
  constructor(ctx: Context) {
    super(ctx, 'jobs')
  }

  /** Starts the command and returns once it runs (its `job/started` is logged). Rejects like ctx.shell.start, or JOBS_LIMIT. */
  abstract start(request: JobStartRequest): Promise<JobInfo>

  /** The session's jobs, live and ended, in start order. */
  abstract list(session: Session): JobInfo[]

  /** Reads a job's output and moves its read mark to the end. Throws JOB_NOT_FOUND. */
  abstract read(session: Session, jobId: string, options?: JobReadOptions): JobOutput

  /** Kills the job's process group (logged `job/ended killed`); a job already ended is returned as it is. Throws JOB_NOT_FOUND. */
  abstract kill(session: Session, jobId: string): Promise<JobInfo>
}
