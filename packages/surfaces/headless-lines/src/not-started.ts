import { HEADLESS_LINES_VERSION, type ResultLine, type RunUsage } from './line-schema.ts'

/** What a failure says in the result line: the message printed on stderr (without `dsh: `), and a typed code. */
export interface ResultError {
  code?: string
  message: string
}

/** The usage of a run that sent no model request. */
export function emptyRunUsage(): RunUsage {
  return { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, cacheHitShare: null }
}

/**
 * The result line of a run that ended before a session was opened: a usage error found by the launcher
 * (argv, a patch, settings) or by headless (a flag, no task, an unknown session), a boot that failed.
 */
export function notStartedResult(exitCode: number, error: ResultError, durationMs: number): ResultLine {
  return {
    type: 'result',
    version: HEADLESS_LINES_VERSION,
    sessionId: null,
    exitCode,
    reason: 'not-started',
    text: '',
    error: { ...(error.code !== undefined ? { code: error.code } : {}), message: error.message },
    turns: 0,
    steps: 0,
    usage: emptyRunUsage(),
    cost: 0,
    cacheSaved: 0,
    unpriced: [],
    durationMs: Math.max(0, Math.round(durationMs)),
    refusals: [],
  }
}

/** A line as written to stdout: one JSON object and a newline. */
export function lineText(line: ResultLine): string {
  return JSON.stringify(line) + '\n'
}
