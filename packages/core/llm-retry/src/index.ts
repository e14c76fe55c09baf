// Retry of model requests that may succeed later (docs/architecture.md, "Agents and the turn").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { RequestFailure, RetryDecision } from '@dsh/agent'
import { LLM_ERROR_CODES, type LlmErrorCode } from '@dsh/llm'
import { checkShape, oneOf, Type, type Static } from '@dsh/session'

/**
 * A failed model request is tried again after `delayMs` (`attempt` counts retries from 1, of at most
 * `maxRetries`). Readers format notices from the numbers, not from `reason`. Its type and its check (issue #28.6).
 */
const RetryFields = {
  attempt: Type.Integer({ minimum: 1 }),
  maxRetries: Type.Integer({ minimum: 0 }),
  code: oneOf(LLM_ERROR_CODES),
  delayMs: Type.Number(),
  reason: Type.String(),
}
const LlmRetryData = Type.Object(RetryFields)
/** Logs written before `maxRetries` existed lack it. */
const StoredLlmRetryData = Type.Object({ ...RetryFields, maxRetries: Type.Optional(RetryFields.maxRetries) })

declare module '@dsh/session' {
  interface SessionEventMap {
    'llm/retry': Static<typeof LlmRetryData>
  }
}

/**
 * Failures that may pass with time. Never retried: AUTH, QUOTA, INVALID_REQUEST, CREDENTIAL_MISSING and
 * UNSUPPORTED (the same request fails the same way) and CONTEXT_WINDOW_EXCEEDED (context management shrinks
 * the request instead).
 */
export const RETRYABLE: readonly LlmErrorCode[] = ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE']

export interface Config {
  maxRetries: number
  baseDelayMs: number
  maxDelayMs: number
  jitter: number
  maxRetryAfterMs: number
}

export const Config: Schema<Config> = Schema.object({
  maxRetries: Schema.natural().default(4).description('Retries of one request before the failure ends the turn.'),
  baseDelayMs: Schema.natural()
    .default(1_000)
    .description('Wait before the first retry; doubled for each further one.'),
  maxDelayMs: Schema.natural().default(30_000).description('Cap of the doubled wait.'),
  jitter: Schema.number()
    .min(0)
    .max(1)
    .default(0.2)
    .description('Fraction of the wait drawn at random and taken off, so many clients do not retry in step.'),
  maxRetryAfterMs: Schema.natural()
    .default(120_000)
    .description(
      'A provider asking to wait longer than this (Retry-After) is not retried: the turn ends with its error instead of hanging.',
    ),
})

/** The wait before retry number `retry` (0 = first): the provider's Retry-After, else capped doubling with jitter. */
export function backoffMs(
  config: Config,
  retry: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs
  const capped = Math.min(config.maxDelayMs, config.baseDelayMs * 2 ** retry)
  return Math.round(capped * (1 - config.jitter * random()))
}

/** Whether and when to retry `failure`; undefined leaves the decision to the next listener. */
export function decide(
  config: Config,
  failure: RequestFailure,
): Extract<RetryDecision, { retry: true }> | { retry: false; reason: string } | undefined {
  const { error, attempt } = failure
  if (!RETRYABLE.includes(error.code)) return undefined
  if (attempt >= config.maxRetries) return { retry: false, reason: `gave up after ${config.maxRetries} retries` }
  const retryAfter = error.extra.retryAfterMs
  if (retryAfter !== undefined && retryAfter > config.maxRetryAfterMs) {
    return {
      retry: false,
      reason: `the provider asked to wait ${retryAfter} ms, more than maxRetryAfterMs (${config.maxRetryAfterMs})`,
    }
  }
  const delayMs = backoffMs(config, attempt, retryAfter)
  const reason =
    retryAfter !== undefined
      ? `${error.code}: the provider asked to wait ${retryAfter} ms`
      : `${error.code}: retry ${attempt + 1} of ${config.maxRetries}`
  return { retry: true, delayMs, reason }
}

export const name = 'llm-retry'
export const inject = ['sessions']

export function apply(ctx: Context, config: Config) {
  // Not model-visible: a reader without this plugin may keep the events uninterpreted.
  ctx.sessions.defineKind(ctx, 'llm/retry', {
    ignorable: true,
    schema: LlmRetryData,
    validateStored: (data) => checkShape(StoredLlmRetryData, data, 'data'),
  })
  ctx.on('agent/request-error', async (failure, next) => {
    const decision = decide(config, failure)
    if (!decision) return next()
    if (!decision.retry) {
      ctx.logger('llm-retry').debug('%s', `not retrying ${failure.error.code}: ${decision.reason}`)
      return next()
    }
    failure.agent.session.append('llm/retry', {
      attempt: failure.attempt + 1,
      maxRetries: config.maxRetries,
      code: failure.error.code,
      delayMs: decision.delayMs,
      reason: decision.reason,
    })
    return decision
  })
}
