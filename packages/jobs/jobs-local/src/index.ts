import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { Context } from '@dsh/cordis'
import {
  Jobs,
  JobsError,
  JobEndedData,
  JobLostData,
  jobsOfLog,
  JobStartedData,
  type JobInfo,
  type JobOutput,
  type JobReadOptions,
  type JobStartRequest,
} from '@dsh/jobs'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/shell'
import type {} from '@dsh/spill'
import { LiveJob } from './live-job.ts'
import { Reaper } from './reaper.ts'
import { JOB_TAG_VARIABLE } from './tagged.ts'

export interface Config {
  maxRunningPerSession: number
  memoryChars: number
  readChars: number
  logChars: number
  exitDrainMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxRunningPerSession: Schema.natural()
    .min(1)
    .default(8)
    .description('Jobs one session may have running at once; another start is refused (JOBS_LIMIT).'),
  memoryChars: Schema.natural()
    .min(1)
    .default(1_000_000)
    .description("Characters of each job's latest output kept in memory for job_output."),
  readChars: Schema.natural()
    .min(1)
    .default(20_000)
    .description('Characters one read hands out at most (the latest ones; the log file has all).'),
  logChars: Schema.natural()
    .default(50_000_000)
    .description("Characters of each job's output written to its log file in the session's spill folder."),
  exitDrainMs: Schema.natural()
    .default(100)
    .description('How long output is still read after the command exits (a terminal may report the exit first).'),
})

/**
 * ctx.jobs for this process (docs/architecture.md, "Background jobs"): each job is `ctx.shell.start` (the
 * session's authority, the scrubbed environment), lives in the agent's scope and in this plugin's, so
 * either ending kills it, and logs its start and end in its session.
 */
export default class LocalJobs extends Jobs {
  static inject = { shell: { required: true }, sessions: { required: true }, spillStore: { required: false } }
  static Config = Config
  private readonly live = new Map<string, Map<string, LiveJob>>()
  /** Ended jobs of this process keep their output for reads until their agent's scope ends. */
  private readonly ended = new Map<string, LiveJob>()
  private readonly reaper = new Reaper()

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    // Ignorable: a composition without this row still opens a session that ran jobs (it shows none).
    ctx.sessions.defineKind(ctx, 'job/started', { ignorable: true, schema: JobStartedData })
    ctx.sessions.defineKind(ctx, 'job/ended', { ignorable: true, schema: JobEndedData })
    ctx.sessions.defineKind(ctx, 'job/lost', { ignorable: true, schema: JobLostData })
    ctx.on('session/opened', (session, how) => how !== 'created' && this.recordLost(session))
    ctx.effect(
      () => () =>
        Promise.all(
          [...this.live.values()].flatMap((jobs) => [...jobs.values()].map((job) => job.stop('session-ended'))),
        ).then(() => this.reaper.close()),
      'kill background jobs',
    )
  }

  async start(request: JobStartRequest): Promise<JobInfo> {
    const { session } = request
    const jobs = this.jobsOf(session)
    const running = [...jobs.values()].filter((job) => job.running).length
    if (running >= this.config.maxRunningPerSession)
      throw new JobsError(
        'JOBS_LIMIT',
        `${running} jobs are already running in this session (at most ${this.config.maxRunningPerSession}); kill one with job_kill first`,
      )
    this.reaper.ensureRunning()
    const tag = randomUUID()
    const process = await this.ctx.shell.start(request.command, {
      cwd: request.cwd,
      authority: request.authority,
      env: { [JOB_TAG_VARIABLE]: tag },
    })
    const jobId = `job-${jobsOfLog(session.events).length + 1}`
    const dir = this.ctx.get('spillStore')?.readableDir(session.id)
    const logPath = dir ? join(dir, 'jobs', `${jobId}.log`) : undefined
    const job = new LiveJob(
      { jobId, command: request.command, cwd: request.cwd, startedAt: Date.now(), logPath, tag },
      process,
      this.config,
    )
    jobs.set(jobId, job)
    this.reaper.watch(process.pid, tag)
    session.append('job/started', {
      jobId,
      callId: request.callId,
      command: request.command,
      cwd: request.cwd,
      mode: request.authority.mode,
      pid: process.pid,
      ...(logPath && { logPath }),
    })
    const key = `${session.id}\0${jobId}`
    void job.ended.then(({ reason, exit }) => {
      this.reaper.forget(process.pid, tag)
      this.ended.set(key, job)
      jobs.delete(jobId)
      if (!session.closed)
        session.append('job/ended', {
          jobId,
          reason,
          exitCode: exit.exitCode,
          signal: exit.signal,
          outputChars: job.output.total,
        })
    })
    request.scope.effect(
      () => () => job.stop('session-ended').then(() => void this.ended.delete(key)),
      `background job ${jobId}`,
    )
    return job.info()
  }

  list(session: Session): JobInfo[] {
    return jobsOfLog(session.events).map(({ started }) => this.find(session, started.jobId))
  }

  read(session: Session, jobId: string, options: JobReadOptions = {}): JobOutput {
    const job = this.liveOrEnded(session, jobId)
    if (!job) return { job: this.find(session, jobId), text: '', skippedChars: 0 }
    const { text, skipped } = job.output.read(options.tail === true)
    return { job: this.find(session, jobId), text, skippedChars: skipped }
  }

  async kill(session: Session, jobId: string): Promise<JobInfo> {
    const job = this.jobsOf(session).get(jobId)
    if (job) await job.stop('killed')
    return this.find(session, jobId)
  }

  private jobsOf(session: Session): Map<string, LiveJob> {
    let jobs = this.live.get(session.id)
    if (!jobs) this.live.set(session.id, (jobs = new Map()))
    return jobs
  }

  private liveOrEnded(session: Session, jobId: string): LiveJob | undefined {
    return this.jobsOf(session).get(jobId) ?? this.ended.get(`${session.id}\0${jobId}`)
  }

  /** The job as this process holds it, else as the log says (a job of another process is `lost` unless it ended). */
  private find(session: Session, jobId: string): JobInfo {
    const live = this.liveOrEnded(session, jobId)
    if (live) return live.info()
    const logged = jobsOfLog(session.events).find((job) => job.started.jobId === jobId)
    if (!logged) throw new JobsError('JOB_NOT_FOUND', `no job "${jobId}" in this session${this.known(session)}`)
    const { started, ended } = logged
    return {
      jobId,
      command: started.command,
      cwd: started.cwd,
      status: ended?.reason ?? 'lost',
      pid: started.pid,
      startedAt: logged.startedAt,
      exitCode: ended?.exitCode ?? null,
      signal: ended?.signal ?? null,
      outputChars: ended?.outputChars ?? 0,
      ...(started.logPath && { logPath: started.logPath }),
    }
  }

  private known(session: Session): string {
    const ids = jobsOfLog(session.events).map((job) => job.started.jobId)
    return ids.length ? ` (its jobs: ${ids.join(', ')})` : ' (it has none)'
  }

  /** On resume or fork: a job the log started and never ended is held by no process now. */
  private recordLost(session: Session): void {
    for (const job of jobsOfLog(session.events))
      if (!job.ended && !job.lost && !this.jobsOf(session).has(job.started.jobId))
        session.append('job/lost', { jobId: job.started.jobId })
  }
}
