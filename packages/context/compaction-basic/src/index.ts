// The shipped compaction (docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent, RequestDraft, RequestFailure, RetryDecision } from '@dsh/agent'
import {
  Compaction,
  type CompactionInput,
  type CompactionResult,
  type CompactionTrigger,
  type CompactOptions,
  type ReliefMode,
  type SummaryDraft,
} from '@dsh/compaction'
import type {} from '@dsh/agent-presets'
import type {} from '@dsh/commands'
import { LlmError, type LlmRequest, type Message, type ModelInfo, type Sampling } from '@dsh/llm'
import { logRequestHeader, type Session } from '@dsh/session'
import type {} from '@dsh/token-meter'
import { deriveEntries, type Entry } from './entries.ts'
import { planSummary } from './planning.ts'
import { SummaryError, Summarizer } from './summarize.ts'
import { filesSection, filesTouched, parseSections, renderSummary } from './sections.ts'
import { relieveUntilFits, type Relief, type ReliefOutcome } from './recovery.ts'
import { learnedWindow, learnFromRefusal } from './window.ts'
import { INSTRUCTION, MERGE_INSTRUCTION, PART_INSTRUCTION, PART_INTRO, SUMMARY_INTRO } from './texts.ts'

export { deriveEntries, type Entry } from './entries.ts'
export { chooseCut, pack, units, type Cut, type CutOptions, type CutResult } from './plan.ts'
export { planSummary, type SummaryPlan } from './planning.ts'
export { relieveUntilFits, type Relief, type ReliefOutcome } from './recovery.ts'
export { learnedWindow, statedWindow } from './window.ts'
export { filesTouched, parseSections, SECTION_TITLES } from './sections.ts'

export interface Config {
  threshold: number
  keepRecentRatio: number
  fitRatio: number
  summaryMaxOutputTokens: number
  maxDepth: number
  overflowMargin: number
  maxEstimateScale: number
  maxReliefRounds: number
  maxRecoveriesPerStep: number
  keepInstructions: boolean
  instruction: string
  partInstruction: string
  mergeInstruction: string
  partIntro: string
  summaryIntro: string
}

type Header = Pick<LlmRequest, 'route' | 'system' | 'tools'> & Sampling

/**
 * Compaction at step boundaries (docs/architecture.md, "Context"). Before each model request (`agent/request`, after the other
 * listeners settled the route), a session whose pressure passed `threshold` of the route's window is first
 * relieved (`compaction/relieve`: the pruner) and compacted only if it is still over; a request the provider
 * refuses as too long (`agent/request-error` with `CONTEXT_WINDOW_EXCEEDED`) is compacted and retried once;
 * `/compact` compacts on demand.
 */
export default class BasicCompaction extends Compaction {
  static override inject = ['sessions', 'llm', 'tokenMeter']
  static Config: Schema<Config> = Schema.object({
    threshold: Schema.number()
      .min(0.05)
      .max(1)
      .default(0.8)
      .description("Context pressure (tokens / the route's window) at which a step boundary compacts."),
    keepRecentRatio: Schema.number()
      .min(0)
      .max(0.9)
      .default(0.25)
      .description('Share of the window the most recent history may keep verbatim after a compaction.'),
    fitRatio: Schema.number()
      .min(0.1)
      .max(1)
      .default(0.9)
      .description(
        'Share of the window one summary request may fill, by estimate (the rest is margin for the estimate).',
      ),
    summaryMaxOutputTokens: Schema.natural()
      .min(64)
      .default(4096)
      .description('Output tokens reserved for (and allowed to) one summary.'),
    maxDepth: Schema.natural()
      .min(1)
      .default(3)
      .description('Levels of splitting (parts, summaries of parts) before a compaction gives up.'),
    overflowMargin: Schema.number()
      .min(0)
      .default(0.1)
      .description(
        'After a provider refuses a request as too long, estimates are scaled so that request counts as this much over the window.',
      ),
    maxEstimateScale: Schema.number()
      .min(1)
      .default(4)
      .description(
        'Largest factor estimates are scaled by after a refusal (a provider refusing far below the window means the catalog window is wrong, not the estimate).',
      ),
    maxReliefRounds: Schema.natural()
      .min(1)
      .default(3)
      .description(
        'Rounds of relief (prune old results, shorten recent ones, summarize older turns) one recovery may run before it gives up.',
      ),
    maxRecoveriesPerStep: Schema.natural()
      .min(1)
      .default(3)
      .description(
        'Times one step may be relieved and retried after the provider refused it as too long (each retry follows a relief that changed the history).',
      ),
    keepInstructions: Schema.boolean()
      .default(true)
      .description('Keep a leading instructions message (AGENTS.md) verbatim instead of summarizing it.'),
    instruction: Schema.string()
      .role('textarea')
      .default(INSTRUCTION)
      .description('The request for a summary of the whole history.'),
    partInstruction: Schema.string()
      .role('textarea')
      .default(PART_INSTRUCTION)
      .description('The request for a summary of one part, when the history is summarized in parts.'),
    mergeInstruction: Schema.string()
      .role('textarea')
      .default(MERGE_INSTRUCTION)
      .description('The request that merges the summaries of parts into one.'),
    partIntro: Schema.string().default(PART_INTRO).description('Opens each part after the first ({part}, {parts}).'),
    summaryIntro: Schema.string().default(SUMMARY_INTRO).description('Opens the summary message the model sees.'),
  })

  private readonly inflight = new WeakMap<Agent, Promise<CompactionResult>>()
  private readonly stepOf = new WeakMap<Agent, string>()
  private readonly handledRequest = new WeakMap<Agent, number>()
  private readonly compactedAt = new WeakMap<Agent, string>()
  private readonly failedTurn = new WeakMap<Agent, string>()
  private readonly recoveries = new WeakMap<Agent, { step: string; count: number }>()

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx)
    ctx.on('agent/request', async (draft, next) => {
      await next() // the route and header are settled by every other listener first
      await this.atStepBoundary(draft)
    })
    // Before generic retry policies: retrying a refused request unchanged cannot succeed.
    ctx.on('agent/request-error', (failure, next) => this.onRequestError(failure, next), { prepend: true })
    ctx.inject(['commands'], (inner) => {
      inner.commands.register(inner, {
        name: 'compact',
        description: 'Summarize the older history now to free context (optionally: what the summary should focus on).',
        run: (args, { agent }) => this.command(agent, args),
      })
    })
  }

  compact(agent: Agent, options: CompactOptions): Promise<CompactionResult> {
    if (this.inflight.has(agent))
      return Promise.resolve({ ok: false, code: 'BUSY', reason: 'a compaction of this session is already running' })
    const run = this.run(agent, options).finally(() => this.inflight.delete(agent))
    this.inflight.set(agent, run)
    return run
  }

  private async command(agent: Agent, focus: string): Promise<string> {
    if (agent.running) {
      agent.session.append('compaction/requested', focus ? { focus } : {})
      return 'The history will be compacted before the next model request.'
    }
    const result = await this.compact(agent, { trigger: 'manual', ...(focus ? { focus } : {}) })
    if (!result.ok) throw Object.assign(new Error(`compaction failed: ${result.reason}`), { code: result.code })
    return `Compacted the history: about ${result.tokensBefore} tokens before, ${result.tokensAfter} after (${result.requests} summary request${result.requests === 1 ? '' : 's'}).`
  }

  /** An agent preset may turn automatic compaction off for its sessions (`minimal`); `/compact` still runs. */
  private automatic(agent: Agent): boolean {
    return this.ctx.get('agentPresets')?.compacts(agent.session) ?? true
  }

  private async atStepBoundary(draft: RequestDraft): Promise<void> {
    const { agent } = draft
    await this.inflight.get(agent) // a /compact started while idle lands before this request is built
    const step = `${draft.turnId}:${draft.step}`
    this.stepOf.set(agent, step)
    const requested = requestedCompaction(agent.session)
    if (requested && this.handledRequest.get(agent) !== requested.seq) {
      this.handledRequest.set(agent, requested.seq) // a plan that fails logs no compaction/start: ask once
      const { focus } = requested.data
      await this.compact(agent, {
        trigger: 'manual',
        request: draft.request,
        signal: draft.request.signal,
        ...(focus ? { focus } : {}),
      })
      return
    }
    if (this.compactedAt.get(agent) === step || !this.automatic(agent)) return
    const window = this.windowOf(draft.request, agent.session)
    if (!window) return
    const targetTokens = this.config.threshold * window
    const tokens = () => this.ctx.tokenMeter.pressure(agent.session, { window, header: draft.request }).tokens
    if (tokens() < targetTokens) return
    // Cheaper relief first (no model call; the pruner), then a summary, then harder rounds: what is logged
    // here is in the history the loop reads after this waterfall, so the request stays what the log derives.
    // A summary before harder cuts: it repeats the prefix the provider cached, and pruning changes it.
    await this.relieve(agent, 'threshold', window, targetTokens, tokens)
    if (tokens() < targetTokens || this.failedTurn.get(agent) === draft.turnId) return
    const result = await this.compact(agent, {
      trigger: 'threshold',
      request: draft.request,
      signal: draft.request.signal,
    })
    if (result.ok) this.compactedAt.set(agent, step)
    else this.failedTurn.set(agent, draft.turnId) // once per turn: a failing summary must not repeat every step
    if (tokens() < targetTokens) return
    const outcome = await this.recover(agent, {
      trigger: 'threshold',
      request: draft.request,
      window,
      targetTokens,
      tokens,
      summarize: result.ok,
    })
    if (outcome.tried.length) this.compactedAt.set(agent, step)
    // Past the threshold is not past the window: the request goes out; a provider refusal recovers again.
    if (!outcome.ok) this.failedTurn.set(agent, draft.turnId) // once per turn: a failing relief must not repeat every step
  }

  /** One `compaction/relieve` waterfall of `mode`; resolves whether a listener changed the log. */
  private async relieve(
    agent: Agent,
    mode: ReliefMode,
    window: number,
    targetTokens: number,
    tokens: () => number,
  ): Promise<boolean> {
    const before = agent.session.length
    const estimate = (messages: readonly Message[]) => this.ctx.tokenMeter.estimateMessages(messages)
    await this.ctx.waterfall(
      'compaction/relieve',
      { agent, mode, window, targetTokens, tokens, estimate },
      async () => {},
    )
    return agent.session.length > before
  }

  /**
   * Relief rounds until the session is under `targetTokens` (issue #18): prune old tool results in place,
   * shorten the largest recent ones (each left readable whole through a spill file), summarize older turns;
   * again while a round changes something, at most `maxReliefRounds`. A failure is logged with what was tried.
   */
  private async recover(
    agent: Agent,
    options: {
      trigger: CompactionTrigger
      request: Header & { signal?: AbortSignal }
      window: number
      targetTokens: number
      tokens: () => number
      estimateScale?: number
      summarize?: boolean
    },
  ): Promise<ReliefOutcome> {
    const { window, targetTokens, tokens } = options
    const summarize = options.summarize ?? true
    const reliefs: Relief[] = [
      { name: 'pruned old tool results', run: () => this.relieve(agent, 'old', window, targetTokens, tokens) },
      { name: 'shortened recent tool results', run: () => this.relieve(agent, 'recent', window, targetTokens, tokens) },
    ]
    if (summarize)
      reliefs.push({
        name: 'summarized older turns',
        run: async () => {
          const result = await this.compact(agent, {
            trigger: options.trigger,
            request: options.request,
            ...(options.request.signal ? { signal: options.request.signal } : {}),
            ...(options.estimateScale ? { estimateScale: options.estimateScale } : {}),
          })
          return result.ok
        },
      })
    const describe = () =>
      `about ${Math.round(tokens())} tokens for a target of ${Math.round(targetTokens)} in a ${window}-token window`
    const outcome = await relieveUntilFits(
      reliefs,
      () => tokens() < targetTokens,
      this.config.maxReliefRounds,
      describe,
    )
    if (!outcome.ok) {
      const tried = outcome.tried.length ? outcome.tried : ['nothing could be pruned, shortened or summarized']
      agent.session.append('context/relief-failed', {
        trigger: options.trigger,
        tried,
        tokens: Math.round(tokens()),
        targetTokens: Math.round(targetTokens),
        reason: outcome.reason,
      })
      this.ctx
        .logger('compaction')
        .warn(
          'session %s: no room found (%s): tried %s; %s',
          agent.session.id,
          options.trigger,
          tried.join(', '),
          outcome.reason,
        )
    }
    return outcome
  }

  private async onRequestError(failure: RequestFailure, next: () => Promise<RetryDecision>): Promise<RetryDecision> {
    const { agent, request } = failure
    const step = this.stepOf.get(agent)
    if (failure.error.code !== 'CONTEXT_WINDOW_EXCEEDED' || !step || !this.automatic(agent)) return next()
    const done = this.recoveries.get(agent)
    const count = done?.step === step ? done.count : 0
    if (count >= this.config.maxRecoveriesPerStep) return next()
    // The provider's own words may name the real window: from now on it is the session's.
    const window = learnFromRefusal(
      this.ctx.llm,
      agent.session,
      request.route,
      failure.error.message,
      this.describe(request)?.contextWindow ?? 0,
    )
    const estimated = this.ctx.tokenMeter.estimateRequest(request)
    const estimateScale =
      window && estimated < window
        ? Math.min(this.config.maxEstimateScale, (window / estimated) * (1 + this.config.overflowMargin))
        : 1
    const tokens = () => this.ctx.tokenMeter.pressure(agent.session, { window, header: request }).tokens * estimateScale
    // The provider refused this history: whatever the estimate says, it must shrink by at least the margin.
    const targetTokens = Math.min(this.config.threshold * window, tokens() * (1 - this.config.overflowMargin))
    const outcome = await this.recover(agent, {
      trigger: 'overflow',
      request,
      window,
      targetTokens,
      tokens,
      estimateScale,
    })
    if (!outcome.tried.length) return next()
    // Each retry follows a relief that changed the history; a bounded number per step.
    this.recoveries.set(agent, { step, count: count + 1 })
    this.compactedAt.set(agent, step)
    return {
      retry: true,
      delayMs: 0,
      reason: `the provider refused the request as too long; ${outcome.tried.join(', ')}`,
    }
  }

  private describe(request: Header): ModelInfo | undefined {
    try {
      return this.ctx.llm.describe(request.route)
    } catch {
      return undefined // no adapter for the route: the loop reports that itself
    }
  }

  /** The route's window for this session: the catalog's, or the smaller one a provider stated (logged). */
  private windowOf(request: Header, session: Session): number {
    const catalog = this.describe(request)?.contextWindow ?? 0
    const learned = learnedWindow(session, request.route)
    if (learned !== undefined) this.ctx.llm.offerWindow(request.route, learned) // a resumed session tells the catalog again
    return learned !== undefined && (!catalog || learned < catalog) ? learned : catalog
  }

  private async run(agent: Agent, options: CompactOptions): Promise<CompactionResult> {
    const session = agent.session
    const logger = this.ctx.logger('compaction')
    const logged = session.last('request/header')?.data
    const header: Header = options.request ?? {
      route: agent.route,
      system: logged?.system ?? '',
      tools: logged?.tools ?? [],
      ...logged?.sampling,
    }
    const info = this.describe(header)
    const window = this.windowOf(header, session)
    const scale = Math.max(1, options.estimateScale ?? 1)
    const base = this.ctx.tokenMeter.messageEstimator()
    const estimate = scale === 1 ? base : (message: Message) => Math.ceil(base(message) * scale)
    const plan = planSummary(entriesOf(session), {
      window,
      ...(info?.maxOutputTokens ? { modelMaxOutputTokens: info.maxOutputTokens } : {}),
      headerTokens: Math.ceil(this.ctx.tokenMeter.estimateRequest({ ...header, messages: [] }) * scale),
      instructionTokens: Math.ceil(this.ctx.tokenMeter.estimateText(this.longestInstruction(options.focus)) * scale),
      estimate,
      // Automatic compaction only when it can save something; `/compact` is the user's call.
      minSummarizedTokens:
        options.trigger === 'manual'
          ? 0
          : Math.min(this.config.summaryMaxOutputTokens, info?.maxOutputTokens ?? Infinity),
      config: this.config,
    })
    if (!plan.ok) {
      logger.warn('session %s: not compacted (%s): %s', session.id, options.trigger, plan.reason)
      return { ok: false, code: plan.code, reason: plan.reason }
    }
    const { cut } = plan
    const tokensBefore = this.ctx.tokenMeter.pressure(session, { window, header }).tokens
    // The summary requests derive from the log: the header they reuse, the range, the focus, the output limit.
    logRequestHeader(session, header, window)
    session.append('compaction/start', {
      trigger: options.trigger,
      fromSeq: cut.fromSeq,
      toSeq: cut.toSeq,
      tokens: tokensBefore,
      window,
      maxOutputTokens: plan.maxOutputTokens,
      ...(options.focus ? { focus: options.focus } : {}),
    })
    await session.flush()
    const summarizer = new Summarizer({
      request: header,
      maxOutputTokens: plan.maxOutputTokens,
      budget: plan.budget,
      estimate,
      stream: (request) => summaryStream(this.ctx, session, request),
      record: (text) => void session.append('compaction/text', { text }),
      signal: options.signal ?? new AbortController().signal,
      instruction: this.config.instruction,
      partInstruction: this.config.partInstruction,
      mergeInstruction: this.config.mergeInstruction,
      partIntro: this.config.partIntro,
      maxDepth: this.config.maxDepth,
      charsPerToken: this.ctx.tokenMeter.config.charsPerToken,
    })
    let summary: string
    try {
      const input: CompactionInput = {
        agent,
        messages: plan.messages,
        budgetTokens: plan.budget,
        estimate: (messages) => messages.reduce((sum, message) => sum + estimate(message), 0),
      }
      const prepared = await this.ctx.waterfall('compaction/prepare', input, async () => input)
      summary = await summarizer.run(prepared.messages, options.focus)
    } catch (error) {
      const code =
        error instanceof SummaryError
          ? error.code
          : error instanceof LlmError && error.code === 'CONTEXT_WINDOW_EXCEEDED'
            ? 'SUMMARY_TOO_LARGE'
            : 'SUMMARY_FAILED'
      const reason = error instanceof Error ? error.message : String(error)
      session.append('compaction/end', {
        ok: false,
        code,
        reason,
        requests: summarizer.requests,
        usage: summarizer.usage,
      })
      await session.flush()
      logger.warn('session %s: compaction (%s) failed: %s', session.id, options.trigger, reason)
      return { ok: false, code, reason }
    }
    // The task survives: the model's sections, the files the log shows touched, and what hooks add.
    // The whole session's files so far: the summary outlives the verbatim tail it is followed by.
    const files = filesSection(filesTouched(session.events, session.length - 1))
    const draft: SummaryDraft = {
      agent,
      trigger: options.trigger,
      fromSeq: cut.fromSeq,
      toSeq: cut.toSeq,
      sections: parseSections(summary),
      added: files ? [files] : [],
    }
    await this.ctx.waterfall('compaction/summary', draft, async () => {})
    const sections = [...draft.sections, ...draft.added]
    const event = session.append('user/message', {
      content: [{ type: 'text', text: renderSummary(this.config.summaryIntro, summary, draft.added) }],
      source: 'summary',
      replaces: { fromSeq: cut.fromSeq, toSeq: cut.toSeq },
    })
    const tokensAfter = this.ctx.tokenMeter.pressure(session, { window, header }).tokens
    session.append('compaction/end', {
      ok: true,
      summarySeq: event.seq,
      tokensAfter,
      requests: summarizer.requests,
      usage: summarizer.usage,
      sections,
    })
    await session.flush()
    return {
      ok: true,
      summarySeq: event.seq,
      fromSeq: cut.fromSeq,
      toSeq: cut.toSeq,
      tokensBefore,
      tokensAfter,
      requests: summarizer.requests,
    }
  }

  private longestInstruction(focus?: string): string {
    const { instruction, partInstruction, mergeInstruction, partIntro } = this.config
    return (
      [instruction, partInstruction + partIntro, mergeInstruction].reduce((a, b) => (b.length > a.length ? b : a)) +
      (focus ?? '')
    )
  }
}

/** One summary request, durable before it is paid for, named as compaction's so the request check derives it. */
async function* summaryStream(ctx: Context, session: Session, request: LlmRequest) {
  await session.flush()
  yield* ctx.llm.stream({ ...request, origin: { sessionId: session.id, purpose: 'compaction' } })
}

/** A `/compact` asked for while a turn ran, not yet started: the last `compaction/requested` after the last `compaction/start`. */
function requestedCompaction(session: Session): { seq: number; data: { focus?: string } } | undefined {
  // Asked at every step boundary: the session's per-kind index, not a scan back through a log that may
  // never have held a compaction (docs/performance.md, Long sessions).
  const requested = session.last('compaction/requested')
  const started = session.last('compaction/start')
  if (!requested || (started && started.seq > requested.seq)) return undefined
  return { seq: requested.seq, data: requested.data as { focus?: string } }
}

/** The fold's own messages (so estimates and the request reuse them) with the seqs and sources a cut needs. */
function entriesOf(session: Session): Entry[] {
  const entries = deriveEntries(session.events)
  const messages = session.messages()
  if (entries.length !== messages.length)
    throw new Error(`the history fold disagrees with @dsh/session (${entries.length} vs ${messages.length} messages)`)
  for (let i = 0; i < entries.length; i++) entries[i]!.message = messages[i]!
  return entries
}
