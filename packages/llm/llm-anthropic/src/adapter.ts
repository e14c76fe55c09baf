import type { Context } from '@dsh/cordis'
import type {} from '@dsh/app'
import type {} from '@dsh/credentials'
import { LlmError, type LlmAdapter, type LlmRequest, type ModelInfo, type Route, type StreamChunk } from '@dsh/llm'
import type Anthropic from '@anthropic-ai/sdk'
import type { Config } from './config.ts'
import { EventReader } from './events.ts'
import { httpFailure, IdleWatchdog } from '@dsh/llm'
import { requestBody } from './wire.ts'

export const DEFAULT_BASE_URL = 'https://api.anthropic.com'
/** Besides config, the base URL comes only from the process environment, never from a file a repository holds. */
export const BASE_URL_ENV = 'ANTHROPIC_BASE_URL'

const LABEL = 'Anthropic'

/**
 * The SDK's platform headers (OS, architecture, runtime and package versions, retry counters) are removed:
 * nothing beyond the request itself and a `user-agent` naming dsh leaves the machine (DESIGN §7).
 */
const SILENCED_HEADERS = Object.fromEntries(
  ['Lang', 'Package-Version', 'OS', 'Arch', 'Runtime', 'Runtime-Version', 'Retry-Count', 'Timeout', 'Helper-Method'].map((name) => [`X-Stainless-${name}`, null]),
)

// Loaded on first use: a launch that never talks to this provider does not pay for the SDK.
let sdk: Promise<typeof import('@anthropic-ai/sdk')> | undefined
const loadSdk = () => (sdk ??= import('@anthropic-ai/sdk'))

/**
 * Anthropic messages on the official SDK (DESIGN §7): streaming, thinking blocks with their signatures
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
      const client = await this.client()
      const body = requestBody(request, this.describe(request.route.model), this.provider, this.config)
      watchdog = new IdleWatchdog(this.config.idleTimeoutMs, () => call.abort())
      const stream = await client.messages.create(body as unknown as Anthropic.MessageCreateParamsStreaming, { signal: call.signal })
      const reader = new EventReader()
      for await (const event of stream) {
        watchdog.poke()
        for (const piece of reader.read(event)) yield piece
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
      defaultHeaders: { ...SILENCED_HEADERS, 'User-Agent': `dsh/${this.ctx.app.version}` },
    })
  }

  private missingKey(): LlmError {
    const name = this.config.apiKeyName
    return new LlmError('CREDENTIAL_MISSING', `${LABEL} needs an API key: ${name} is not set; ${this.ctx.credentials.howToSet(name)}`)
  }

  /** The one finish of a failed stream. Never throws: it runs on every error path. */
  private failed(error: unknown, aborted: boolean, timedOut: boolean): StreamChunk {
    if (aborted) return { type: 'finish', reason: 'aborted' }
    const failure = timedOut ? new LlmError('TIMEOUT', `${LABEL} sent nothing for ${this.config.idleTimeoutMs} ms (idleTimeoutMs)`) : this.classify(error)
    const data = failure.toJSON()
    try {
      data.message = this.ctx.credentials.redact(data.message)
    } catch {
      data.message = `${failure.code} (the message could not be checked for secrets, so it is not shown)`
    }
    return { type: 'finish', reason: 'error', error: data }
  }

  private classify(error: unknown): LlmError {
    if (error instanceof LlmError) return error
    const e = error as any
    if (typeof e?.status === 'number') {
      return httpFailure(LABEL, e.status, e.headers instanceof Headers ? e.headers : undefined, String(e.apiMessage ?? e.error?.error?.message ?? e.message ?? ''), this.config.errorBodyChars)
    }
    // An error event inside a stream that had started (overloaded, api_error) arrives without a status.
    if (e?.error?.type || e?.error?.error?.type) {
      const type = e.error?.error?.type ?? e.error?.type
      return new LlmError(type === 'overloaded_error' || type === 'api_error' ? 'SERVER' : type === 'rate_limit_error' ? 'RATE_LIMIT' : 'INVALID_REQUEST', `${LABEL} reported ${type} mid-stream: ${String(e.message ?? '')}`)
    }
    if (e?.name === 'APIConnectionTimeoutError') return new LlmError('TIMEOUT', `${LABEL} at ${this.baseUrl} did not answer in time`)
    const cause = e?.cause?.message ? ` (${e.cause.code ? `${e.cause.code}: ` : ''}${e.cause.message})` : ''
    return new LlmError('TRANSPORT', `could not talk to ${LABEL} at ${this.baseUrl}: ${String(e?.message ?? error)}${cause}`)
  }
}
