import { DSH_STOPPED } from '@dsh/session'

/**
 * Whether a call's signal was aborted because dsh is stopping (the turn was cut with `DSH_STOPPED`), not by a
 * cancel: a tool says so in its result, so the model that continues the turn knows nobody stopped it.
 */
export function stoppedByDsh(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as { code?: unknown } | undefined)?.code === DSH_STOPPED
}
