import type { Context } from '@dsh/cordis'
import type {} from '@dsh/jobs'
import type { SandboxAuthority } from '@dsh/sandbox'
import { ToolError, type ToolContext } from '@dsh/tools'
import { refusal } from './bash.ts'

/**
 * A `bash` call with `run_in_background: true`: started as a job of ctx.jobs under the call's authority
 * (through ctx.shell, so confined and scrubbed like any command), answered with its id at once. Without a
 * jobs row the call is refused and nothing runs.
 */
export async function startInBackground(
  ctx: Context,
  command: string,
  context: ToolContext,
  cwd: string,
  authority: SandboxAuthority,
): Promise<string> {
  const jobs = ctx.get('jobs')
  if (!jobs)
    throw new ToolError(
      'INVALID_ARGS',
      'run_in_background is not available here (no jobs row is mounted); run the command without it, nothing was started',
    )
  const job = await jobs
    .start({ session: context.session, scope: context.scope, callId: context.callId, command, cwd, authority })
    .catch((error) => Promise.reject(refusal(error)))
  const log = job.logPath ? ` Its whole output is also written to ${job.logPath}.` : ''
  return `Started background job ${job.jobId} (pid ${job.pid}) in ${cwd}. Read its output with job_output("${job.jobId}"), stop it with job_kill("${job.jobId}"); you will be told when it exits.${log}`
}
