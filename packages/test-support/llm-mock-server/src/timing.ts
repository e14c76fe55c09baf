import type { RecordedRequest } from './types.ts'

/**
 * The server's own share of a run: for each request, from its arrival to the end of its response,
 * summed. Scripted delays count (they are the "model" being slow); a benchmark subtracts this from the
 * wall time it measured to get the harness's overhead. Requests still open are counted up to now.
 */
export function serverTimeMs(requests: readonly RecordedRequest[], now = performance.now()): number {
  return requests.reduce((sum, request) => sum + ((request.timing.endedAt ?? now) - request.timing.receivedAt), 0)
}
