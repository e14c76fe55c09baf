import type { LadderTimings } from './process-group.ts'

/** What one run is bounded by, resolved from the caller's options and the provider's Config. */
export interface RunLimits extends LadderTimings {
  timeoutMs: number
  outputCapBytes: number
}

/** Filled in by a run so the provider can kill it when it is disposed. */
export interface LiveRun {
  terminate(): Promise<unknown>
}
