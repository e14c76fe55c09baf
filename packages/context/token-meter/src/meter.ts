import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Message, ToolResultBlock, ToolSchema } from '@dsh/llm'
import { ARGUMENTS_PRUNED_KIND, isInterruptedAnswer, type AnySessionEvent, type Session } from '@dsh/session'
import { estimateHeader, estimateMessage, estimateText, type EstimateOptions } from './estimate.ts'

/** How full a session's context is, as the next request would carry it. */
export interface Pressure {
  /** Tokens the next request carries (system prompt, tools, history). */
  tokens: number
  /** The context window of the route in force (0 when unknown). */
  window: number
  /** `tokens / window` (0 when the window is unknown). */
  ratio: number
  /** `usage`: the last answered request's provider count plus an estimate of what was appended since. */
  source: 'usage' | 'estimate'
}

export type Config = EstimateOptions

/** What a request carries besides the history. */
export interface RequestHeader {
  system: string
  tools: readonly ToolSchema[]
}

declare module '@dsh/cordis' {
  interface Context {
    tokenMeter: TokenMeter
  }
}

/** The history event a surface event contributes, as the fold would derive it (for the estimate only). */
function asMessage(event: AnySessionEvent): Message | undefined {
  if (event.type === 'user/message') return { role: 'user', content: event.data.content }
  if (event.type === 'tool/result')
    return { role: 'tool', content: [{ type: 'tool-result', callId: event.data.callId, content: event.data.content }] }
  // An interrupted answer is logged but not history (`isInterruptedAnswer`): the next request does not carry it.
  if (event.type === 'assistant/message' && event.data.content.length && !isInterruptedAnswer(event.data))
    return { role: 'assistant', content: event.data.content }
  return undefined
}

function usageTokens(event: AnySessionEvent): number {
  if (event.type !== 'assistant/message' || event.data.error) return 0
  const usage = event.data.usage
  return usage.input + usage.cacheRead + usage.cacheWrite + usage.output
}

/**
 * Context pressure per session (D+P), a fold over the log: the last answered request's provider
 * usage (prompt plus answer) and an estimate of what was appended since (less what `tool/pruned` events
 * cut from results since), or a whole estimate when no provider counted, or when a compaction rewrote the
 * history after the last count. Owns: the estimate and
 * the number. Must not own: what to do about it (compaction decides).
 */
export class TokenMeter extends Service {
  static Config: Schema<Config> = Schema.object({
    charsPerToken: Schema.number()
      .min(1)
      .default(4)
      .description('Characters per token for estimates, where no provider counted.'),
    imageTokens: Schema.natural().default(1600).description('Estimated tokens of one image.'),
    messageOverheadTokens: Schema.natural()
      .default(4)
      .description('Estimated tokens each message adds beyond its content (role, framing).'),
  })

  // Plain closures, not methods: a service is reached through a proxy, too slow to cross per message.
  private readonly cached: (message: Message) => number
  private readonly sum: (messages: readonly Message[]) => number
  private readonly forEvent: (event: AnySessionEvent) => number
  private readonly bySession = new WeakMap<Session, { length: number; tokens: number; source: Pressure['source'] }>()

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx, 'tokenMeter')
    const byMessage = new WeakMap<object, number>()
    const options = { ...config }
    const cached = (this.cached = (message) => {
      let tokens = byMessage.get(message)
      if (tokens === undefined) byMessage.set(message, (tokens = estimateMessage(message, options)))
      return tokens
    })
    this.sum = (messages) => {
      let total = 0
      for (const message of messages) total += cached(message)
      return total
    }
    // Events appended since a provider's count, by event (their derived message objects are made afresh).
    this.forEvent = (event) => {
      let tokens = byMessage.get(event)
      if (tokens === undefined) {
        const message = asMessage(event)
        byMessage.set(event, (tokens = message ? estimateMessage(message, options) : 0))
      }
      return tokens
    }
  }

  estimateText(text: string): number {
    return estimateText(text, this.config)
  }

  /** Estimated tokens of one message. Cached by identity: messages are values, never changed in place. */
  estimateMessage(message: Message): number {
    return this.cached(message)
  }

  /** The same estimate as a plain function, for loops over many messages. */
  messageEstimator(): (message: Message) => number {
    return this.cached
  }

  estimateMessages(messages: readonly Message[]): number {
    return this.sum(messages)
  }

  estimateRequest(request: { system: string; tools: readonly ToolSchema[]; messages: readonly Message[] }): number {
    return estimateHeader(request, this.config) + this.estimateMessages(request.messages)
  }

  /**
   * The session's pressure. `window` overrides the last logged `request/context` window; `header` (the
   * system prompt and tools about to be sent) overrides the last logged `request/header` in an estimate.
   */
  pressure(session: Session, options: { window?: number; header?: RequestHeader } = {}): Pressure {
    const window = options.window ?? session.last('request/context')?.data.contextWindow ?? 0
    let counted = this.bySession.get(session)
    if (!counted || counted.length !== session.length)
      this.bySession.set(session, (counted = { length: session.length, ...this.countHistory(session) }))
    let tokens = counted.tokens
    // A provider's count already includes the header it was sent; an estimate adds it.
    if (counted.source === 'estimate')
      tokens += estimateHeader(
        options.header ?? session.last('request/header')?.data ?? { system: '', tools: [] },
        this.config,
      )
    return { tokens, window, ratio: window > 0 ? tokens / window : 0, source: counted.source }
  }

  private countHistory(session: Session): { tokens: number; source: Pressure['source'] } {
    const events = session.events as readonly AnySessionEvent[]
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i]!
      // A summary replaced part of the history after the last count: the count no longer describes it.
      if (event.type === 'user/message' && event.data.replaces) break
      // So did a shortened call's arguments (their view is the pruner's, the count is of the whole).
      if ((event.type as string) === ARGUMENTS_PRUNED_KIND) break
      const counted = usageTokens(event)
      if (!counted) continue
      const estimate = this.forEvent
      let appended = 0
      for (let j = i + 1; j < events.length; j++) appended += estimate(events[j]!)
      return { tokens: Math.max(0, counted + appended + this.prunedSince(events, i)), source: 'usage' }
    }
    return { tokens: this.estimateMessages(session.messages()), source: 'estimate' }
  }

  /**
   * What `tool/pruned` events after the count at `counted` changed (by estimate; ≤ 0 when they shortened):
   * for each result they pruned, its last view minus the view the count (or the appended estimate) included.
   * A result a summary had replaced before the count is left alone, as the fold leaves it.
   */
  private prunedSince(events: readonly AnySessionEvent[], counted: number): number {
    const latest = new Map<number, ToolResultBlock['content']>()
    for (let j = counted + 1; j < events.length; j++) {
      const event = events[j]!
      if (event.type === 'tool/pruned') latest.set(event.data.seq, event.data.content)
    }
    if (!latest.size) return 0
    const counts = new Map<number, ToolResultBlock['content']>()
    const replaced: { fromSeq: number; toSeq: number }[] = []
    for (let j = Math.min(...latest.keys()) + 1; j <= counted; j++) {
      const event = events[j]!
      if (event.type === 'user/message' && event.data.replaces) replaced.push(event.data.replaces)
      else if (event.type === 'tool/pruned' && latest.has(event.data.seq))
        counts.set(event.data.seq, event.data.content)
    }
    let delta = 0
    for (const [seq, content] of latest) {
      const result = events[seq]
      if (result?.type !== 'tool/result' || replaced.some((range) => range.fromSeq <= seq && seq <= range.toSeq))
        continue
      delta += this.resultTokens(content) - this.resultTokens(counts.get(seq) ?? result.data.content)
    }
    return delta
  }

  private resultTokens(content: ToolResultBlock['content']): number {
    return estimateMessage({ role: 'tool', content: [{ type: 'tool-result', callId: '', content }] }, this.config)
  }
}
