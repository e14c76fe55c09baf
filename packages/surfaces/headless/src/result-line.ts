import type { SessionEvent } from '@dsh/session'
import { emptyRunUsage, HEADLESS_LINES_VERSION, type ResultLine, type RunRefusal } from '@dsh/headless-lines'
import { sessionUsage, type PriceTable } from '@dsh/usage-kit'

export interface RunOutcome {
  sessionId: string | null
  /** The whole log of the run's session (a resume's earlier events set the route in force). */
  events: readonly SessionEvent[]
  /** The first seq this run appended; earlier events are not counted. */
  fromSeq: number
  exitCode: number
  text: string
  error?: { code?: string; message: string }
  refusals: readonly RunRefusal[]
  durationMs: number
  prices: PriceTable
  structuredOutput?: { value: unknown }
}

/** The `{"type":"result"}` line: sums of this run's part of the log, priced from the price table. */
export function resultLine(outcome: RunOutcome): ResultLine {
  const own = outcome.events.filter((event) => event.seq >= outcome.fromSeq)
  const ended = own.findLast((event) => event.type === 'turn/end') as SessionEvent<'turn/end'> | undefined
  const { cost, cacheSaved, unpriced, ...usage } = outcome.sessionId
    ? sessionUsage(outcome.events, outcome.prices, outcome.fromSeq)
    : { cost: 0, cacheSaved: 0, unpriced: [], ...emptyRunUsage() }
  return {
    type: 'result',
    version: HEADLESS_LINES_VERSION,
    sessionId: outcome.sessionId,
    exitCode: outcome.exitCode,
    reason: ended?.data.reason ?? 'not-started',
    text: outcome.text,
    ...(outcome.error
      ? {
          error: {
            ...((outcome.error.code ?? ended?.data.error?.code)
              ? { code: outcome.error.code ?? ended?.data.error?.code }
              : {}),
            message: outcome.error.message,
          },
        }
      : {}),
    turns: own.filter((event) => event.type === 'turn/start').length,
    steps: own.filter((event) => event.type === 'step/start').length,
    usage,
    cost,
    cacheSaved,
    unpriced,
    durationMs: Math.max(0, Math.round(outcome.durationMs)),
    refusals: [...outcome.refusals],
    ...(outcome.structuredOutput ? { structuredOutput: outcome.structuredOutput.value } : {}),
  }
}
