// The run record of `dsh ralph` (docs/ralph.md): its shape, its exit codes and its durable write.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/** Version of the run record's shape, bumped when a key is removed or changes meaning. */
export const RECORD_VERSION = 1

/** Exit codes of `dsh ralph` (docs/ralph.md). */
export const RALPH_EXIT = {
  passed: 0,
  /** The loop stopped without a pass: --max-iterations, a budget, or an iteration that could not run. */
  notPassed: 1,
  usage: 2,
  /** The check cannot be confined here (no working sandbox backend) and --unconfined-check was not given. */
  unconfinable: 3,
} as const

/**
 * `budget`: the tokens or the cost reached --budget-tokens / --budget-usd; `unpriced`: --budget-usd was given but
 * an iteration ran on a model the price table does not name, so the budget can no longer be measured;
 * `unconfinable`: the sandbox backend stopped working (nothing unconfined was run instead); `check-error`: the
 * check could not be started (the workspace is gone, the sandbox refused the authority, bash did not spawn).
 */
export type StopReason =
  'passed' | 'max-iterations' | 'budget' | 'unpriced' | 'run-failed' | 'unconfinable' | 'check-error' | 'interrupted'

/** The one line `--json` prints at the end (also for a usage error or a refusal, with what is known). */
export interface RalphResultLine {
  type: 'result'
  runId: string | null
  /** `usage`: a usage error before the loop started; `error`: it failed otherwise (a boot failure). */
  stopReason: StopReason | 'usage' | 'error'
  exitCode: number
  iterations: number
  sessions: string[]
  tokens: number
  cost: number | null
  lastCheck: CheckOutcome | null
  record: string | null
  message?: string
}

export interface CheckOutcome {
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  ms: number
  /** The last OUTPUT_TAIL_CHARS of stdout and stderr as they interleaved, secrets redacted. */
  outputTail: string
}

export interface Iteration {
  n: number
  /** Null when the iteration's dsh failed before it opened a session. */
  sessionId: string | null
  runExitCode: number | null
  /** The run's `turn/end` reason from its result line (or `no-result` when it printed none). */
  runReason: string
  tokens: number
  /** USD from the result line (the usage.prices setting); null when the model has no price or no line came. */
  cost: number | null
  usage: { input: number; cacheRead: number; cacheWrite: number; output: number }
  startedAt: string
  runMs: number
  /** Absent when the check was not run (the iteration failed before a session, or the loop was interrupted). */
  check?: CheckOutcome
}

export interface RalphRecord {
  version: typeof RECORD_VERSION
  runId: string
  prompt: string
  until: string
  cwd: string
  limits: { maxIterations: number; budgetTokens: number | null; budgetUsd: number | null; checkTimeoutSeconds: number }
  /** How the check runs: confined by the sandbox backend with no network, or unconfined (--unconfined-check). */
  confinement: { confined: boolean; backend: string; enforcement: string; network: 'none' | 'host' }
  startedAt: string
  endedAt: string | null
  stopReason: StopReason | null
  /** Why the check could not run, with `unconfinable` and `check-error`. */
  stopMessage?: string
  tokens: number
  /** The iterations' summed cost in USD; null once one of them could not be priced. */
  cost: number | null
  iterations: Iteration[]
}

/** Writes the record whole and durably: a temporary file, flushed, renamed over the old one, the folder flushed. */
export function writeRecord(file: string, record: RalphRecord): void {
  const temp = `${file}.${process.pid}.tmp`
  const fd = openSync(temp, 'w', 0o600)
  try {
    writeSync(fd, `${JSON.stringify(record, null, 2)}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, file)
  const dir = openSync(join(file, '..'), 'r')
  try {
    fsyncSync(dir)
  } finally {
    closeSync(dir)
  }
}
