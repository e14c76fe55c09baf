import type { AnySessionEvent, SessionEvent } from '@dsh/session'
import type { JobEnded, JobStarted } from './events.ts'

/** A job as the log knows it: started, and how it ended (or `lost`), if it did. */
export interface LoggedJob {
  started: JobStarted
  /** When `job/started` was logged (epoch ms). */
  startedAt: number
  ended?: JobEnded
  lost?: true
}

/** The jobs of a log in start order (a fold over `job/started`, `job/ended` and `job/lost`). */
export function jobsOfLog(events: readonly SessionEvent[]): LoggedJob[] {
  const jobs = new Map<string, LoggedJob>()
  for (const event of events as readonly AnySessionEvent[]) {
    if (event.type === 'job/started') jobs.set(event.data.jobId, { started: event.data, startedAt: event.time })
    const job = event.type === 'job/ended' || event.type === 'job/lost' ? jobs.get(event.data.jobId) : undefined
    if (job && event.type === 'job/ended') job.ended = event.data
    if (job && event.type === 'job/lost') job.lost = true
  }
  return [...jobs.values()]
}
