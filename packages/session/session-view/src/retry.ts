import type { RetryInfo } from './items.ts'

/** The parts of a retry notice, for surfaces that lay them out their own way. */
export interface RetryWords {
  /** `SERVER`: the failure's code, if logged. */
  code?: string
  /** `2 s`, `250 ms`: the wait before the next attempt, if logged. */
  wait?: string
  /** `retry 1 of 4`, or `retry 3` from a log that did not record the total. */
  count?: string
}

/** Reads `llm/retry` data (see @dsh/llm-retry) field by field; the `reason` text is never parsed. */
export function retryInfoOf(data: {
  attempt?: unknown
  maxRetries?: unknown
  code?: unknown
  delayMs?: unknown
}): RetryInfo {
  return {
    ...(typeof data.attempt === 'number' ? { attempt: data.attempt } : {}),
    ...(typeof data.maxRetries === 'number' ? { maxRetries: data.maxRetries } : {}),
    ...(typeof data.code === 'string' && data.code ? { code: data.code } : {}),
    ...(typeof data.delayMs === 'number' ? { delayMs: data.delayMs } : {}),
  }
}

export function retryWords(data: {
  attempt?: unknown
  maxRetries?: unknown
  code?: unknown
  delayMs?: unknown
}): RetryWords {
  const info = retryInfoOf(data)
  const total = info.maxRetries !== undefined ? ` of ${info.maxRetries}` : ''
  return {
    ...(info.code ? { code: info.code } : {}),
    ...(info.delayMs !== undefined ? { wait: waitText(info.delayMs) } : {}),
    ...(info.attempt !== undefined ? { count: `retry ${info.attempt}${total}` } : {}),
  }
}

/** `Model request failed (SERVER); retrying in 2 s — retry 1 of 4`, from an `llm/retry` event's data. */
export function retryText(data: {
  attempt?: unknown
  maxRetries?: unknown
  code?: unknown
  delayMs?: unknown
  reason?: unknown
}): string {
  const { code, wait, count } = retryWords(data)
  return `Model request failed${code ? ` (${code})` : ''}; retrying${wait ? ` in ${wait}` : ''}${count ? ` — ${count}` : ''}`
}

/** `250 ms`, `1.5 s`, `2 s`. */
export function waitText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`
  const seconds = Math.round(ms / 100) / 10
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`
}
