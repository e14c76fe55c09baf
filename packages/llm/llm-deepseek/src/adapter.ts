import type { Context } from '@dsh/cordis'
import type {} from '@dsh/app'
import type {} from '@dsh/credentials'
import { LlmError, type LlmAdapter, type LlmRequest, type ModelInfo, type Route, type StreamChunk } from '@dsh/llm'
import {
  baseUrlFrom,
  errorDetail,
  fromCatalog,
  httpFailure,
  streamAttempt,
  transportFailure,
  type Attempt,
} from '@dsh/llm-kit'
import { ChatCompletionsReader } from '@dsh/llm-kit'
import type { Config } from './config.ts'
import { sseData } from './sse.ts'
import { requestBody } from './wire.ts'

export const DEFAULT_BASE_URL = 'https://api.deepseek.com'
/** The only place besides config a base URL comes from: the process environment, never a file a repository holds. */
export const BASE_URL_ENV = 'DEEPSEEK_BASE_URL'

const LABEL = 'DeepSeek'

/**
 * DeepSeek's `POST {base}/chat/completions` stream (docs/architecture.md, "Models"). One call is one attempt: retries belong to
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
    return baseUrlFrom(this.config.baseUrl, BASE_URL_ENV, DEFAULT_BASE_URL)
  }

  models(): ModelInfo[] {
    return this.config.models.map((model) => ({ ...model }))
  }

  describe(model: string): ModelInfo {
    return fromCatalog(this.config.models, this.config.unknownModel, model)
  }

  async ready(_route: Route): Promise<{ ok: true } | { ok: false; error: LlmError }> {
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    return key ? { ok: true } : { ok: false, error: this.missingKey() }
  }

  stream(request: LlmRequest): AsyncGenerator<StreamChunk> {
    const classify = (error: unknown) =>
      error instanceof LlmError ? error : transportFailure(LABEL, this.baseUrl, error)
    const options = {
      label: LABEL,
      idleTimeoutMs: this.config.idleTimeoutMs,
      classify,
      redact: (text: string) => this.ctx.credentials.redact(text),
    }
    return streamAttempt(request, options, (attempt) => this.attempt(request, attempt))
  }

  private async *attempt(request: LlmRequest, attempt: Attempt): AsyncGenerator<StreamChunk> {
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    if (!key) throw this.missingKey()
    const body = requestBody(request, this.describe(request.route.model), this.provider)
    attempt.watch()
    const response = await fetch(`${this.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'user-agent': `dsh/${this.ctx.app.version}`,
      },
      body: JSON.stringify(body),
      signal: attempt.signal,
    })
    attempt.poke()
    if (!response.ok)
      throw httpFailure(
        LABEL,
        response.status,
        response.headers,
        errorDetail(await response.text()),
        this.config.errorBodyChars,
      )
    if (!response.body) throw new LlmError('EMPTY_RESPONSE', `${LABEL} answered HTTP ${response.status} with no body`)
    const reader = new ChatCompletionsReader()
    for await (const data of sseData(response.body, attempt.poke)) {
      if (data === '[DONE]') break
      for (const chunk of reader.read(parseEvent(data))) yield chunk
    }
    yield reader.finish()
  }

  private missingKey(): LlmError {
    const name = this.config.apiKeyName
    return new LlmError(
      'CREDENTIAL_MISSING',
      `${LABEL} needs an API key: ${name} is not set; ${this.ctx.credentials.howToSet(name)}`,
    )
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
  if (parsed?.error)
    throw new LlmError(
      'SERVER',
      `${LABEL} reported an error mid-stream: ${String(parsed.error.message ?? JSON.stringify(parsed.error))}`,
    )
  return parsed
}
