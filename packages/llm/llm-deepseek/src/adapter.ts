import type { Context } from '@dsh/cordis'
import type {} from '@dsh/app'
import type {} from '@dsh/credentials'
import { LlmError, type LlmAdapter, type LlmRequest, type ModelInfo, type Route, type StreamChunk } from '@dsh/llm'
import { ChunkReader } from './chunks.ts'
import type { Config } from './config.ts'
import { errorDetail, httpFailure, IdleWatchdog } from '@dsh/llm'
import { sseData } from './sse.ts'
import { requestBody } from './wire.ts'

export const DEFAULT_BASE_URL = 'https://api.deepseek.com'
/** The only place besides config a base URL comes from: the process environment, never a file a repository holds. */
export const BASE_URL_ENV = 'DEEPSEEK_BASE_URL'

const LABEL = 'DeepSeek'

/**
 * DeepSeek's `POST {base}/chat/completions` stream (DESIGN §7). One call is one attempt: retries belong to
 * llm-retry. The key is resolved on every request and never leaves this object except in the
 * `authorization` header; every error message is redacted before it is returned.
 */
export class DeepSeekAdapter implements LlmAdapter {
  readonly provider: string

  constructor(
    private readonly ctx: Context,
    private readonly config: Config,
  ) {
    this.provider = config.provider
  }

  /** Where requests go: config, else $DEEPSEEK_BASE_URL, else DeepSeek's public API. */
  get baseUrl(): string {
    return (this.config.baseUrl || process.env[BASE_URL_ENV] || DEFAULT_BASE_URL).replace(/\/+$/, '')
  }

  models(): ModelInfo[] {
    return this.config.models.map((model) => ({ ...model }))
  }

  describe(model: string): ModelInfo {
    const known = this.config.models.find((entry) => entry.id === model)
    return known ? { ...known } : { ...this.config.unknownModel, id: model }
  }

  async ready(_route: Route): Promise<{ ok: true } | { ok: false; error: LlmError }> {
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    return key ? { ok: true } : { ok: false, error: this.missingKey() }
  }

  async *stream(request: LlmRequest): AsyncGenerator<StreamChunk> {
    if (request.signal.aborted) {
      yield { type: 'finish', reason: 'aborted' }
      return
    }
    const call = new AbortController()
    const onAbort = () => call.abort()
    request.signal.addEventListener('abort', onAbort, { once: true })
    let watchdog: IdleWatchdog | undefined
    try {
      const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
      if (!key) throw this.missingKey()
      const body = requestBody(request, this.describe(request.route.model), this.provider)
      watchdog = new IdleWatchdog(this.config.idleTimeoutMs, () => call.abort())
      const response = await fetch(`${this.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': `dsh/${this.ctx.app.version}` },
        body: JSON.stringify(body),
        signal: call.signal,
      })
      watchdog.poke()
      if (!response.ok) throw httpFailure(LABEL, response.status, response.headers, errorDetail(await response.text()), this.config.errorBodyChars)
      if (!response.body) throw new LlmError('EMPTY_RESPONSE', `${LABEL} answered HTTP ${response.status} with no body`)
      const reader = new ChunkReader()
      for await (const data of sseData(response.body, () => watchdog!.poke())) {
        if (data === '[DONE]') break
        for (const chunk of reader.read(parseEvent(data))) yield chunk
      }
      yield reader.finish()
    } catch (error) {
      yield this.failed(error, request.signal.aborted, watchdog?.fired ?? false)
    } finally {
      watchdog?.stop()
      request.signal.removeEventListener('abort', onAbort)
      call.abort()
    }
  }

  private missingKey(): LlmError {
    const name = this.config.apiKeyName
    return new LlmError('CREDENTIAL_MISSING', `${LABEL} needs an API key: ${name} is not set; ${this.ctx.credentials.howToSet(name)}`)
  }

  /** The one finish of a failed stream. Never throws: it runs on every error path. */
  private failed(error: unknown, aborted: boolean, timedOut: boolean): StreamChunk {
    if (aborted) return { type: 'finish', reason: 'aborted' }
    let failure: LlmError
    if (timedOut) failure = new LlmError('TIMEOUT', `${LABEL} sent nothing for ${this.config.idleTimeoutMs} ms (idleTimeoutMs)`)
    else if (error instanceof LlmError) failure = error
    else failure = new LlmError('TRANSPORT', `could not talk to ${LABEL} at ${this.baseUrl}: ${describeError(error)}`)
    const data = failure.toJSON()
    try {
      data.message = this.ctx.credentials.redact(data.message)
    } catch {
      data.message = `${failure.code} (the message could not be checked for secrets, so it is not shown)`
    }
    return { type: 'finish', reason: 'error', error: data }
  }
}

function parseEvent(data: string): unknown {
  let parsed: any
  try {
    parsed = JSON.parse(data)
  } catch {
    throw new LlmError('TRANSPORT', `${LABEL} sent a stream event that is not JSON`)
  }
  // An error reported inside a stream that had already started.
  if (parsed?.error) throw new LlmError('SERVER', `${LABEL} reported an error mid-stream: ${String(parsed.error.message ?? JSON.stringify(parsed.error))}`)
  return parsed
}

/** `fetch failed` says little; its cause (ECONNREFUSED, a DNS failure) is what a person needs. */
function describeError(error: unknown): string {
  const message = String((error as any)?.message ?? error)
  const cause = (error as any)?.cause
  return cause?.message ? `${message} (${cause.code ? `${cause.code}: ` : ''}${cause.message})` : message
}
