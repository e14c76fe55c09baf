import type {} from '@dsh/agent'
import type { Context } from '@dsh/cordis'
import { JobsError } from '@dsh/jobs'
import type { AnySessionEvent } from '@dsh/session'
import { defineTool, ToolError, Type, type ToolContext } from '@dsh/tools'
import { describeJob, exitNotice, formatOutput } from './format.ts'

export const name = 'tool-jobs'
export const inject = ['tools', 'jobs', 'agents']

const jobId = Type.String({ description: 'The job id `bash` with run_in_background returned (job-1, …).' })

/** A JobsError as a typed result the model reads. */
function asToolError(error: unknown): unknown {
  return error instanceof JobsError ? new ToolError(error.code, error.message) : error
}

/**
 * The job tools (docs/architecture.md, "Background jobs"): read, list and kill the session's background
 * jobs. When a job exits by itself, its session's agent gets a notice injected for its next step (a
 * `user/message` with source `inject`, so the request derives it from the log like any message).
 */
export function apply(ctx: Context) {
  const guarded =
    <A>(body: (args: A, context: ToolContext) => Promise<string> | string) =>
    async (args: A, context: ToolContext) => {
      try {
        return await body(args, context)
      } catch (error) {
        throw asToolError(error)
      }
    }

  ctx.tools.register(
    ctx,
    defineTool({
      name: 'job_output',
      description:
        "Read a background job's output: what it printed since you last read it (default), or with tail: true its latest output. Also says whether it is still running and how it ended.",
      parameters: Type.Object(
        {
          job_id: jobId,
          tail: Type.Optional(Type.Boolean({ description: 'true: the latest output, whatever was read before.' })),
        },
        { additionalProperties: false },
      ),
      concurrencySafe: true,
      summarize: (args) => `job_output ${args.job_id}`,
      execute: guarded((args, context) =>
        formatOutput(ctx.jobs.read(context.session, args.job_id, { tail: args.tail === true }), args.tail === true),
      ),
    }),
  )

  ctx.tools.register(
    ctx,
    defineTool({
      name: 'job_list',
      description:
        'List the background jobs of this session with their status (running, exited, killed, session-ended, lost).',
      parameters: Type.Object({}, { additionalProperties: false }),
      concurrencySafe: true,
      summarize: () => 'job_list',
      execute: guarded(
        (_args, context) =>
          ctx.jobs.list(context.session).map(describeJob).join('\n') || 'No background jobs in this session.',
      ),
    }),
  )

  ctx.tools.register(
    ctx,
    defineTool({
      name: 'job_kill',
      description: 'Stop a background job: its whole process group gets SIGTERM, then SIGKILL. Returns how it ended.',
      parameters: Type.Object({ job_id: jobId }, { additionalProperties: false }),
      summarize: (args) => `job_kill ${args.job_id}`,
      execute: guarded(async (args, context) => describeJob(await ctx.jobs.kill(context.session, args.job_id))),
    }),
  )

  ctx.on('session/event', (session, logged) => {
    const event = logged as AnySessionEvent
    if (event.type !== 'job/ended' || event.data.reason !== 'exited') return
    const agent = ctx.agents.bySession(session.id)
    const job = ctx.jobs.list(session).find((candidate) => candidate.jobId === event.data.jobId)
    if (agent && agent.status !== 'disposed' && job) agent.inject(exitNotice(job))
  })
}
