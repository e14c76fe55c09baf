export {
  Jobs,
  JobsError,
  type JobsErrorCode,
  type JobInfo,
  type JobOutput,
  type JobReadOptions,
  type JobStartRequest,
  type JobStatus,
} from './jobs.ts'
export { jobsOfLog, type LoggedJob } from './log.ts'
export {
  JOB_END_REASONS,
  type JobEndReason,
  type JobStarted,
  type JobEnded,
  type JobLost,
  JobStartedData,
  JobEndedData,
  JobLostData,
} from './events.ts'
