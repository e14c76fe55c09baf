import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { dirname } from 'node:path'
import type { JobEndReason, JobInfo } from '@dsh/jobs'
import type { ShellExit, ShellProcess } from '@dsh/shell'
import { JobOutputBuffer, type OutputLimits } from './job-output.ts'
import { killTagged } from './tagged.ts'

export interface LiveJobLimits extends OutputLimits {
  logChars: number
  exitDrainMs: number
}

export interface LiveJobInit {
  jobId: string
  command: string
  cwd: string
  startedAt: number
  logPath: string | undefined
  /** The value of the job's DSH_JOB_TAG: what it started outside its group is found by it. */
  tag: string
}

/**
 * One running job of this process: its shell process, its output (memory and log file), and its end. The
 * end is settled once, by whichever comes first: the command exiting, `kill`, or the session ending.
 */
export class LiveJob {
  readonly output: JobOutputBuffer
  private readonly log: WriteStream | undefined
  private logged = 0
  private reason: JobEndReason | undefined
  private exit: ShellExit | undefined
  /** Resolves once the job is over and its output is flushed to the log file. */
  readonly ended: Promise<{ reason: JobEndReason; exit: ShellExit }>

  constructor(
    readonly init: LiveJobInit,
    private readonly process: ShellProcess,
    private readonly limits: LiveJobLimits,
  ) {
    this.output = new JobOutputBuffer(limits)
    this.log = init.logPath ? openLog(init.logPath) : undefined
    const stopData = process.onData((data) => this.take(data))
    this.ended = process.exited.then(async (exit) => {
      // node-pty can report the exit before the last output is read (microsoft/node-pty#72): give it a moment.
      await new Promise((resolve) => setTimeout(resolve, limits.exitDrainMs))
      stopData()
      await process.terminate() // what the command left behind in its group goes with it
      killTagged(init.tag) // and what it started outside its group (setsid, a daemonizing server)
      this.exit = exit
      this.reason ??= 'exited'
      await new Promise<void>((resolve) => (this.log ? this.log.end(resolve) : resolve()))
      return { reason: this.reason, exit }
    })
  }

  get running(): boolean {
    return this.exit === undefined
  }

  /** Kills the group (the reason is the first one given) and waits for the end. */
  async stop(reason: JobEndReason): Promise<void> {
    if (this.running) this.reason ??= reason
    await this.process.terminate()
    await this.ended
  }

  info(): JobInfo {
    const status = this.running ? 'running' : this.reason!
    return {
      jobId: this.init.jobId,
      command: this.init.command,
      cwd: this.init.cwd,
      status,
      pid: this.process.pid,
      startedAt: this.init.startedAt,
      exitCode: this.exit?.exitCode ?? null,
      signal: this.exit?.signal ?? null,
      outputChars: this.output.total,
      ...(this.init.logPath && { logPath: this.init.logPath }),
    }
  }

  private take(data: string): void {
    this.output.push(data)
    if (!this.log || this.logged >= this.limits.logChars) return
    const room = this.limits.logChars - this.logged
    this.log.write(
      data.length > room
        ? `${data.slice(0, room)}\n[log file full at ${this.limits.logChars} characters: later output is only in memory]\n`
        : data,
    )
    this.logged += Math.min(room, data.length)
  }
}

function openLog(path: string): WriteStream {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 })
  stream.on('error', () => {}) // a full disk loses the file copy, never the job or its memory copy
  return stream
}
