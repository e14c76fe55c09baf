import { isDeepStrictEqual } from 'node:util'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import {
  findEncodingDrift,
  frozenCopy,
  sameAsMade,
  violation,
  type RequestEncoder,
  type RequestGuard,
} from './boundary.ts'
import { LlmError, type LlmRequest, type ModelInfo, type Route, type StreamChunk } from './vocabulary.ts'

export interface Config {
  unchecked: boolean
}

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
     * @mode waterfall — wraps the stream of one model request. Listeners may wrap the iterable `next()`
     * returns; the adapter runs at the end of the chain. The request is checked before the first listener
     * and again after the last one: a listener that changes it gets `INVARIANT_VIOLATION`, not a model call.
     */
    'llm/stream'(request: LlmRequest, next: () => AsyncIterable<StreamChunk>): AsyncIterable<StreamChunk>
  }
}

/**
 * The model seam's registry (docs/architecture.md, "Models"). Owns: adapters by provider, the `llm/stream`
 * chain and its boundary (the request check as its first and last step, then the encoders, then the
 * adapter on a frozen copy). Must not own: what a request should be (the guard derives it from the log),
 * which route a session uses, retries (llm-retry), keys.
 */
export class Llm extends Service {
  static Config: Schema<Config> = Schema.object({
    unchecked: Schema.boolean()
      .default(false)
      .description(
        'Send requests with no request check mounted (no @dsh/invariants). Off, such a composition refuses to boot and every request is refused; only for experiments.',
      ),
  })

  private adapters = new Map<string, LlmAdapter>()
  private guard: RequestGuard | undefined
  private readonly encoders = new Set<RequestEncoder>()
  private readonly learnedWindows = new Map<string, number>()

  constructor(
    ctx: Context,
    readonly config: Config = { unchecked: false },
  ) {
    super(ctx, 'llm')
  }

  /** Mounts the request check (one per tree: @dsh/invariants) for as long as the calling plugin lives. */
  useGuard(ctx: Context, guard: RequestGuard): void {
    ctx.effect(() => {
      if (this.guard) throw new Error('a request check is already mounted')
      this.guard = guard
      return () => {
        if (this.guard === guard) this.guard = undefined
      }
    }, 'llm request check')
  }

  /** Whether a request check is mounted (boot refuses a tree without one unless `unchecked`). */
  get guarded(): boolean {
    return !!this.guard
  }

  /** Adds a deterministic image encoder run after the last check (attachments). */
  useEncoder(ctx: Context, encoder: RequestEncoder): void {
    ctx.effect(() => {
      this.encoders.add(encoder)
      return () => this.encoders.delete(encoder)
    }, 'llm request encoder')
  }

  /** Registers an adapter for as long as the calling plugin lives. */
  register(ctx: Context, adapter: LlmAdapter): void {
    ctx.effect(() => {
      if (this.adapters.has(adapter.provider))
        throw new Error(`an adapter for provider "${adapter.provider}" is already registered`)
      this.adapters.set(adapter.provider, adapter)
      return () => this.adapters.delete(adapter.provider)
    }, `llm adapter ${adapter.provider}`)
  }

  providers(): string[] {
    return [...this.adapters.keys()]
  }

  adapter(provider: string): LlmAdapter {
    const adapter = this.adapters.get(provider)
    if (!adapter)
      throw new LlmError(
        'UNKNOWN_PROVIDER',
        `no model provider "${provider}" is mounted (mounted: ${this.providers().join(', ') || 'none'})`,
      )
    return adapter
  }

  /** The model's capabilities, its window no larger than a provider said it really is (`offerWindow`). */
  describe(route: Route): ModelInfo {
    const info = this.adapter(route.provider).describe(route.model)
    const learned = this.learnedWindows.get(`${route.provider}/${route.model}`)
    return learned !== undefined && learned < info.contextWindow ? { ...info, contextWindow: learned } : info
  }

  /**
   * A window the provider stated for a model (in a refusal's text) that is smaller than the catalog's: every
   * later `describe` of that model in this process says it. The session that learned it logs it (compaction's
   * `context/window`) and offers it again on resume; this map is only the process's catalog.
   */
  offerWindow(route: Route, contextWindow: number): void {
    const key = `${route.provider}/${route.model}`
    if (!Number.isInteger(contextWindow) || contextWindow <= 0) return
    this.learnedWindows.set(key, Math.min(contextWindow, this.learnedWindows.get(key) ?? Infinity))
  }

  /**
   * Streams through the `llm/stream` waterfall. The request is checked as the caller made it and again as
   * the last listener leaves it, frozen; encoders then resolve its image references and the adapter for its
   * provider receives the frozen result. A refusal throws `INVARIANT_VIOLATION` before any byte is sent.
   */
  stream(request: LlmRequest): AsyncIterable<StreamChunk> {
    return this.boundary(request)
  }

  private async *boundary(request: LlmRequest): AsyncGenerator<StreamChunk> {
    const asMade = this.checked(request, 'as the caller made it')
    yield* this.ctx.waterfall('llm/stream', request, () => this.send(asMade, request))
  }

  private async *send(asMade: LlmRequest, request: LlmRequest): AsyncGenerator<StreamChunk> {
    const final = this.checked(request, 'after the llm/stream listeners')
    if (!isDeepStrictEqual(asMade.origin, final.origin)) throw violation('a listener changed the origin of the request')
    if ('sessionless' in (asMade.origin ?? {})) {
      const changed = sameAsMade(asMade, final)
      if (changed) throw violation(changed)
    }
    let sent = final
    for (const encoder of this.encoders) {
      const messages = await encoder.encode(sent)
      const drift = findEncodingDrift(sent.messages, messages)
      if (drift) throw violation(drift)
      sent = frozenCopy({ ...sent, messages })
    }
    yield* this.adapter(sent.route.provider).stream(sent)
  }

  /** A frozen copy of the request, refused when the guard finds a difference (or when no guard is mounted). */
  private checked(request: LlmRequest, when: string): LlmRequest {
    const copy = frozenCopy(request)
    if (!copy.origin) throw violation(`the request names no origin (a session, or why it has none) ${when}`)
    if (!this.guard) {
      if (this.config.unchecked) return copy
      throw violation('no request check is mounted (mount @dsh/invariants, or set `unchecked: true` on the llm row)')
    }
    const drift = this.guard.check(copy)
    if (drift) throw violation(`${drift} ${when}`)
    return copy
  }
}
