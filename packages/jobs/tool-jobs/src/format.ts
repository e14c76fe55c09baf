import type { JobInfo, JobOutput } from '@dsh/jobs'
import { terminalText } from '@dsh/tool-kit'

/** One line per job: id, status, command (what job_list shows and the notice repeats). */
export function describeJob(job: JobInfo): string {
  const end =
    job.status === 'running'
      ? 'running'
      : job.status === 'lost'
        ? 'lost (dsh stopped while it ran)'
        : `${job.status}${ending(job)}`
  return `${job.jobId} [${end}] ${job.command} (in ${job.cwd}, ${job.outputChars} characters of output)`
}

function ending(job: JobInfo): string {
  if (job.signal) return ` by ${job.signal}`
  return job.exitCode === null ? '' : ` with code ${job.exitCode}`
}

/** A read as the model sees it: plain text, then what was skipped and where the rest is. */
export function formatOutput(read: JobOutput, tail: boolean): string {
  const text = terminalText(read.text).replace(/\n$/, '')
  const notes = [`[${describeJob(read.job)}]`]
  if (read.skippedChars > 0)
    notes.push(
      `[${read.skippedChars} earlier unread characters are not shown${read.job.logPath ? `; the whole output is in ${read.job.logPath}` : ''}]`,
    )
  const empty = tail ? '(no output yet)' : '(no new output since the last read)'
  return [text || empty, ...notes].join('\n')
}

/** The notice the model gets at its next step when a job exits by itself. */
export function exitNotice(job: JobInfo): string {
  return `[Background job ${job.jobId} ended: ${describeJob(job)}. Read the rest of its output with job_output("${job.jobId}").]`
}
