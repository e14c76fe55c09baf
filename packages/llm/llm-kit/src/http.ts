import { LlmError, type LlmErrorCode } from '@dsh/llm'

// Pure helpers every HTTP adapter needs (base URL, status mapping, Retry-After, transport failures, SDK
// headers, an idle watchdog): one copy here.

/**
 * An adapter's base URL without a trailing slash: its config, else the process environment's `envName`, else
 * the provider's public API. Never a file a repository holds, so a repository cannot redirect a key.
 */
export function baseUrlFrom(configured: string, envName: string, fallback: string): string {
  return (configured || process.env[envName] || fallback).replace(/\/+$/, '')
}

/** `Retry-After` (seconds, or an HTTP date) or `retry-after-ms`, as milliseconds from `now`. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms)
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number.parseFloat(value) * 1000)
  // Every HTTP-date form names its month; Date.parse alone would take "-5" for a year and mean "retry now".
  const date = /[a-z]{3}/i.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const OVERFLOW =
  /maximum context length|context length|context window|too many tokens|prompt is too long|context_length_exceeded/i

/** The typed failure for an HTTP error status; `detail` is the provider's own message. */
export function httpFailureCode(status: number, detail: string): LlmErrorCode {
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 402) return 'QUOTA'
  if (status === 429) return 'RATE_LIMIT'
  if (status === 408) return 'TIMEOUT'
  if (status === 413 || (status === 400 && OVERFLOW.test(detail))) return 'CONTEXT_WINDOW_EXCEEDED'
  if (status >= 500) return 'SERVER'
  return 'INVALID_REQUEST'
}

/** The provider's message from an OpenAI-style error body (`{ error: { message } }`), else the text itself. */
export function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body)
    const message = parsed?.error?.message ?? parsed?.message
    if (typeof message === 'string') return message
  } catch {
    // not JSON: the text is the detail
  }
  return body.trim()
}

/** An HTTP error status as a typed failure naming the provider, the status and (capped) the provider's message. */
export function httpFailure(
  label: string,
  status: number,
  headers: Headers | undefined,
  detail: string,
  maxChars: number,
): LlmError {
  const quoted = detail.length > maxChars ? `${detail.slice(0, maxChars)}…` : detail
  const extra: { status: number; retryAfterMs?: number } = { status }
  const wait = headers ? retryAfterMs(headers) : undefined
  if (wait !== undefined) extra.retryAfterMs = wait
  return new LlmError(
    httpFailureCode(status, detail),
    `${label} answered HTTP ${status}${quoted ? `: ${quoted}` : ''}`,
    extra,
  )
}

/** The server could not be reached at all; names the cause (ECONNREFUSED, a DNS failure) that `fetch failed` hides. */
export function transportFailure(label: string, baseUrl: string, error: unknown): LlmError {
  const e = error as any
  const cause = e?.cause?.message ? ` (${e.cause.code ? `${e.cause.code}: ` : ''}${e.cause.message})` : ''
  return new LlmError('TRANSPORT', `could not talk to ${label} at ${baseUrl}: ${String(e?.message ?? error)}${cause}`)
}

const STAINLESS_PLATFORM_HEADERS = [
  'Lang',
  'Package-Version',
  'OS',
  'Arch',
  'Runtime',
  'Runtime-Version',
  'Retry-Count',
  'Timeout',
  'Helper-Method',
].map((name) => `X-Stainless-${name}`)

/**
 * Default headers for a Stainless-generated SDK client (Anthropic's, OpenAI's): its platform headers (OS,
 * architecture, runtime and package versions, retry counters) removed and a `user-agent` naming dsh, so
 * nothing beyond the request itself leaves the machine (docs/architecture.md, "Models").
 */
export function sdkHeaders(version: string): Record<string, string | null> {
  return {
    ...Object.fromEntries(STAINLESS_PLATFORM_HEADERS.map((name) => [name, null])),
    'User-Agent': `dsh/${version}`,
  }
}

/**
 * Fires `onIdle` when `poke()` has not been called for `ms`. Started before the request so a server that
 * never sends headers is caught too.
 */
export class IdleWatchdog {
  private timer: NodeJS.Timeout | undefined
  fired = false

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.poke()
  }

  poke(): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.fired = true
      this.onIdle()
    }, this.ms)
  }

  stop(): void {
    clearTimeout(this.timer)
  }
}
