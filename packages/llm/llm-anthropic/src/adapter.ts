import type { Context } from '@dsh/cordis'
import type {} from '@dsh/app'
import type {} from '@dsh/credentials'
import { LlmError, type LlmAdapter, type LlmRequest, type ModelInfo, type Route, type StreamChunk } from '@dsh/llm'
import {
  baseUrlFrom,
  fromCatalog,
  httpFailure,
  sdkHeaders,
  streamAttempt,
  transportFailure,
  type Attempt,
} from '@dsh/llm-kit'
import type Anthropic from '@anthropic-ai/sdk'
import type { Config } from './config.ts'
import { EventReader } from './events.ts'
import { requestBody } from './wire.ts'

export const DEFAULT_BASE_URL = 'https://api.anthropic.com'
/** Besides config, the base URL comes only from the process environment, never from a file a repository holds. */
export const BASE_URL_ENV = 'ANTHROPIC_BASE_URL'

const LABEL = 'Anthropic'

// Loaded on first use: a launch that never talks to this provider does not pay for the SDK.
let sdk: Promise<typeof import('@anthropic-ai/sdk')> | undefined
const loadSdk = () => (sdk ??= import('@anthropic-ai/sdk'))

/**
 * Anthropic messages on the official SDK (docs/architecture.md, "Models"): streaming, thinking blocks with their signatures
 * (sent back only to this provider), tool use and cache usage. One call is one attempt (`maxRetries: 0`);
 * the key is resolved on every request and passed explicitly, so the SDK reads no key, profile or base URL
 * of its own.
 */
export class AnthropicAdapter implements LlmAdapter {
  readonly provider: string

  constructor(
    private readonly ctx: Context,
    private readonly config: Config,
  ) {
    this.provider = config.provider
  }

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
    const options = {
      label: LABEL,
      idleTimeoutMs: this.config.idleTimeoutMs,
      classify: (error: unknown) => this.classify(error),
      redact: (text: string) => this.ctx.credentials.redact(text),
    }
    return streamAttempt(request, options, (attempt) => this.attempt(request, attempt))
  }

  private async *attempt(request: LlmRequest, attempt: Attempt): AsyncGenerator<StreamChunk> {
    const client = await this.client()
    const body = requestBody(request, this.describe(request.route.model), this.provider, this.config)
    attempt.watch()
    const stream = await client.messages.create(body as unknown as Anthropic.MessageCreateParamsStreaming, {
      signal: attempt.signal,
    })
    const reader = new EventReader()
    for await (const event of stream) {
      attempt.poke()
      for (const piece of reader.read(event)) yield piece
    }
    yield reader.finish()
  }

  private async client(): Promise<Anthropic> {
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    if (!key) throw this.missingKey()
    const { default: Client } = await loadSdk()
    return new Client({
      apiKey: key,
      authToken: null,
      webhookKey: null,
      baseURL: this.baseUrl,
      maxRetries: 0,
      timeout: this.config.idleTimeoutMs,
      logLevel: 'off',
      openTelemetry: { traces: false, propagation: false },
      defaultHeaders: sdkHeaders(this.ctx.app.version),
    })
  }

  private missingKey(): LlmError {
    const name = this.config.apiKeyName
    return new LlmError(
      'CREDENTIAL_MISSING',
      `${LABEL} needs an API key: ${name} is not set; ${this.ctx.credentials.howToSet(name)}`,
    )
  }

  private classify(error: unknown): LlmError {
    if (error instanceof LlmError) return error
    const e = error as any
    if (typeof e?.status === 'number') {
      return httpFailure(
        LABEL,
        e.status,
        e.headers instanceof Headers ? e.headers : undefined,
        String(e.apiMessage ?? e.error?.error?.message ?? e.message ?? ''),
        this.config.errorBodyChars,
      )
    }
    // An error event inside a stream that had started (overloaded, api_error) arrives without a status.
    if (e?.error?.type || e?.error?.error?.type) {
      const type = e.error?.error?.type ?? e.error?.type
      return new LlmError(
        type === 'overloaded_error' || type === 'api_error'
          ? 'SERVER'
          : type === 'rate_limit_error'
            ? 'RATE_LIMIT'
            : 'INVALID_REQUEST',
        `${LABEL} reported ${type} mid-stream: ${String(e.message ?? '')}`,
      )
    }
    if (e?.name === 'APIConnectionTimeoutError')
      return new LlmError('TIMEOUT', `${LABEL} at ${this.baseUrl} did not answer in time`)
    return transportFailure(LABEL, this.baseUrl, error)
  }
}
