import { type Context, Service } from '@dsh/cordis'
import { LlmError, type LlmRequest, type ModelInfo, type Route, type StreamChunk } from './vocabulary.ts'

/** One provider's implementation. Adapters are registered by provider plugins (llm-deepseek, …). */
export interface LlmAdapter {
  provider: string
  /** Models this adapter knows (a catalog, or discovered). */
  models(): ModelInfo[] | Promise<ModelInfo[]>
  /** The model's capabilities; unknown models get the adapter's defaults. */
  describe(model: string): ModelInfo
  /**
   * Streams one request. Must yield exactly one `finish`, last; must not throw for provider failures (they
   * become `finish { reason: 'error', error }`); must stop promptly when `request.signal` aborts.
   */
  stream(request: LlmRequest): AsyncIterable<StreamChunk>
  /** Whether a key or endpoint is configured, checked before any request is sent. */
  ready?(route: Route): Promise<{ ok: true } | { ok: false; error: LlmError }>
}

declare module '@dsh/cordis' {
  interface Context {
    llm: Llm
  }
  interface Events {
    /**
     * @mode waterfall — wraps the stream of one model request. Listeners may mutate `request` before calling
     * `next()` and may wrap the iterable it returns; the adapter runs at the end of the chain.
     */
    'llm/stream'(request: LlmRequest, next: () => AsyncIterable<StreamChunk>): AsyncIterable<StreamChunk>
  }
}

/**
 * The model seam's registry (docs/architecture.md, "Models"). Owns: adapters by provider and the
 * `llm/stream` chain. Must not own: which route a session uses (the log does), retries (llm-retry), keys.
 */
export class Llm extends Service {
  private adapters = new Map<string, LlmAdapter>()

  constructor(ctx: Context) {
    super(ctx, 'llm')
  }

  /** Registers an adapter for as long as the calling plugin lives. */
  register(ctx: Context, adapter: LlmAdapter): void {
    ctx.effect(() => {
      if (this.adapters.has(adapter.provider)) throw new Error(`an adapter for provider "${adapter.provider}" is already registered`)
      this.adapters.set(adapter.provider, adapter)
      return () => this.adapters.delete(adapter.provider)
    }, `llm adapter ${adapter.provider}`)
  }

  providers(): string[] {
    return [...this.adapters.keys()]
  }

  adapter(provider: string): LlmAdapter {
    const adapter = this.adapters.get(provider)
    if (!adapter) throw new LlmError('UNKNOWN_PROVIDER', `no model provider "${provider}" is mounted (mounted: ${this.providers().join(', ') || 'none'})`)
    return adapter
  }

  describe(route: Route): ModelInfo {
    return this.adapter(route.provider).describe(route.model)
  }

  /** Streams through the `llm/stream` waterfall; the adapter for the request's provider ends the chain. */
  stream(request: LlmRequest): AsyncIterable<StreamChunk> {
    return this.ctx.waterfall('llm/stream', request, () => this.adapter(request.route.provider).stream(request))
  }
}
