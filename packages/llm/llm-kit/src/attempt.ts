import { IdleWatchdog } from './http.ts'
import { LlmError, type LlmRequest, type StreamChunk } from '@dsh/llm'

/** What the body of one attempt gets from `streamAttempt`. */
export interface Attempt {
  /** Aborted when the request is, when the idle watchdog fires, and when the attempt ends. */
  signal: AbortSignal
  /** Starts the idle watchdog; call it just before sending, so a server that never answers headers is caught too. */
  watch(): void
  /** Something arrived: the watchdog starts over. */
  poke(): void
}

export interface AttemptOptions {
  /** The provider as messages name it ("DeepSeek"). */
  label: string
  /** Silence after `watch()` that ends the attempt with TIMEOUT. */
  idleTimeoutMs: number
  /** The typed failure for what the body threw. */
  classify(error: unknown): LlmError
  /** Removes secrets from a failure's message; when it throws, the message is replaced by the failure's code. */
  redact(text: string): string
}

/**
 * One streaming attempt with the plumbing every adapter shares: an already-aborted request finishes
 * `aborted` at once; the body's own signal follows the request's and the idle watchdog; whatever the body
 * throws becomes the one `finish` (aborted, TIMEOUT when the watchdog fired, else `classify`), its message
 * redacted; and the call is aborted and the listener removed on every way out. Never throws.
 */
export async function* streamAttempt(
  request: LlmRequest,
  options: AttemptOptions,
  body: (attempt: Attempt) => AsyncIterable<StreamChunk>,
): AsyncGenerator<StreamChunk> {
  if (request.signal.aborted) {
    yield { type: 'finish', reason: 'aborted' }
    return
  }
  const call = new AbortController()
  const onAbort = () => call.abort()
  request.signal.addEventListener('abort', onAbort, { once: true })
  let watchdog: IdleWatchdog | undefined
  const attempt: Attempt = {
    signal: call.signal,
    watch: () => void (watchdog = new IdleWatchdog(options.idleTimeoutMs, onAbort)),
    poke: () => watchdog?.poke(),
  }
  try {
    yield* body(attempt)
  } catch (error) {
    yield failed(options, error, request.signal.aborted, watchdog?.fired ?? false)
  } finally {
    watchdog?.stop()
    request.signal.removeEventListener('abort', onAbort)
    call.abort()
  }
}

/** The one finish of a failed attempt. Never throws: it runs on every error path. */
function failed(options: AttemptOptions, error: unknown, aborted: boolean, timedOut: boolean): StreamChunk {
  if (aborted) return { type: 'finish', reason: 'aborted' }
  const failure = timedOut
    ? new LlmError('TIMEOUT', `${options.label} sent nothing for ${options.idleTimeoutMs} ms (idleTimeoutMs)`)
    : options.classify(error)
  const data = failure.toJSON()
  try {
    data.message = options.redact(data.message)
  } catch {
    data.message = `${failure.code} (the message could not be checked for secrets, so it is not shown)`
  }
  return { type: 'finish', reason: 'error', error: data }
}
