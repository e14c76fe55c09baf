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
import type OpenAI from 'openai'
import { ChatCompletionsReader } from '@dsh/llm-kit'
import type { Config } from './config.ts'
import { requestBody } from './wire.ts'

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1'
/** Besides config, the base URL comes only from the process environment, never from a file a repository holds. */
export const BASE_URL_ENV = 'OPENAI_BASE_URL'

const LABEL = 'the OpenAI-compatible server'

// Loaded on first use: a launch that never talks to this provider does not pay for the SDK.
let sdk: Promise<typeof import('openai')> | undefined
const loadSdk = () => (sdk ??= import('openai'))

/**
 * Chat completions on the official SDK against any OpenAI-compatible base URL (OpenAI, Ollama, vLLM, LM
 * Studio). One call is one attempt (`maxRetries: 0`); the key is resolved on every request.
 */
export class OpenAIAdapter implements LlmAdapter {
  readonly provider: string
  private discovered: { at: number; ids: string[] } | undefined

  constructor(
    private readonly ctx: Context,
    private readonly config: Config,
  ) {
    this.provider = config.provider
  }

  get baseUrl(): string {
    return baseUrlFrom(this.config.baseUrl, BASE_URL_ENV, DEFAULT_BASE_URL)
  }

  /** The catalog, plus what the server lists at `GET /models` (cached for `modelsCacheMs`). */
  async models(): Promise<ModelInfo[]> {
    const catalog = this.config.models.map((model) => ({ ...model }))
    const discover =
      this.config.discoverModels === 'always' ||
      (this.config.discoverModels === 'auto' && this.baseUrl !== DEFAULT_BASE_URL)
    if (!discover) return catalog
    const ids = await this.discover()
    return [...catalog, ...ids.filter((id) => !catalog.some((model) => model.id === id)).map((id) => this.describe(id))]
  }

  describe(model: string): ModelInfo {
    return fromCatalog(this.config.models, this.config.unknownModel, model)
  }

  async ready(_route: Route): Promise<{ ok: true } | { ok: false; error: LlmError }> {
    if (!this.config.requireKey) return { ok: true }
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    return key ? { ok: true } : { ok: false, error: this.missingKey() }
  }

  stream(request: LlmRequest): AsyncGenerator<StreamChunk> {
    const options = {
      label: LABEL,
      idleTimeoutMs: this.config.idleTimeoutMs,
      classify: (error: unknown) => this.classify(error),
      redact: (text: string) => this.redact(text),
    }
    return streamAttempt(request, options, (attempt) => this.attempt(request, attempt))
  }

  private async *attempt(request: LlmRequest, attempt: Attempt): AsyncGenerator<StreamChunk> {
    const client = await this.client()
    const body = requestBody(request, this.describe(request.route.model))
    attempt.watch()
    const stream = await client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming, {
      signal: attempt.signal,
    })
    const reader = new ChatCompletionsReader()
    for await (const chunk of stream) {
      attempt.poke()
      for (const piece of reader.read(chunk)) yield piece
    }
    yield reader.finish()
  }

  /** A client for one request: the key as it is now, no retries, no platform headers. */
  private async client(): Promise<OpenAI> {
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    if (!key && this.config.requireKey) throw this.missingKey()
    const { default: Client } = await loadSdk()
    const headers = sdkHeaders(this.ctx.app.version)
    // A keyless local server gets no authorization header at all (the SDK insists on a key, so it gets a placeholder it never sends).
    if (!key) headers.Authorization = null
    return new Client({
      apiKey: key || 'none',
      baseURL: this.baseUrl,
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      maxRetries: 0,
      timeout: this.config.idleTimeoutMs,
      logLevel: 'off',
      defaultHeaders: headers,
    })
  }

  private async discover(): Promise<string[]> {
    if (this.discovered && Date.now() - this.discovered.at < this.config.modelsCacheMs) return this.discovered.ids
    const ids: string[] = []
    // Without a key there is nothing to ask (and nothing to warn about: listing is not a request the user made).
    if (this.config.requireKey && !(await this.ctx.credentials.resolve(this.config.apiKeyName))) return ids
    try {
      const client = await this.client()
      for await (const model of client.models.list()) ids.push(model.id)
    } catch (error) {
      this.ctx
        .logger('llm-openai')
        .warn('%s', `could not list models at ${this.baseUrl}: ${this.redact(this.classify(error).message)}`)
      return []
    }
    this.discovered = { at: Date.now(), ids }
    return ids
  }

  private missingKey(): LlmError {
    const name = this.config.apiKeyName
    return new LlmError(
      'CREDENTIAL_MISSING',
      `${LABEL} at ${this.baseUrl} needs an API key: ${name} is not set; ${this.ctx.credentials.howToSet(name)} (a local server that needs none: set requireKey: false)`,
    )
  }

  private redact(text: string): string {
    try {
      return this.ctx.credentials.redact(text)
    } catch {
      return '(a message that could not be checked for secrets, so it is not shown)'
    }
  }

  private classify(error: unknown): LlmError {
    if (error instanceof LlmError) return error
    const e = error as any
    if (typeof e?.status === 'number') {
      const detail = String(e.error?.message ?? e.message ?? '')
      const failure = httpFailure(
        LABEL,
        e.status,
        e.headers instanceof Headers ? e.headers : undefined,
        detail,
        this.config.errorBodyChars,
      )
      // The code field names an overflow even where the message does not.
      if (e.status === 400 && e.error?.code === 'context_length_exceeded')
        return new LlmError('CONTEXT_WINDOW_EXCEEDED', failure.message, failure.extra)
      return failure
    }
    if (e?.name === 'APIConnectionTimeoutError')
      return new LlmError('TIMEOUT', `${LABEL} at ${this.baseUrl} did not answer in time`)
    return transportFailure(LABEL, this.baseUrl, error)
  }
}
