// Compaction (docs/architecture.md, "Context").
import { type Context, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import type { LlmRequest, Message, Usage } from '@dsh/llm'
import { agrees, oneOf, Type, UsageSchema, type Same, type Static } from '@dsh/session'
export { shortenMessage, shortenText } from './shorten.ts'

/** Where a section of a summary comes from. */
export const SUMMARY_SOURCES = ['model', 'log', 'hook'] as const
/** One section of a structured summary: the model's (by the headings it was asked for), the log's, or a hook's. */
const SummarySectionData = Type.Object({ title: Type.String(), text: Type.String(), source: oneOf(SUMMARY_SOURCES) })
export type SummarySection = Static<typeof SummarySectionData>

/**
 * A summary about to be logged (the `compaction/summary` waterfall): `PreCompact` hooks (when hooks exist)
 * and other listeners may push sections to `added` (`source: 'hook'`); they are appended to the summary
 * message after the model's text and the log's files section, and stored in `compaction/end`.
 */
export interface SummaryDraft {
  agent: Agent
  trigger: CompactionTrigger
  /** The summarized seq range. */
  fromSeq: number
  toSeq: number
  /** The model's summary split at its headings (read-only for listeners). */
  sections: readonly SummarySection[]
  /** Sections after the model's text: the files touched (from the log), then what listeners add. */
  added: SummarySection[]
}

/** What started a compaction. */
export const COMPACTION_TRIGGERS = ['threshold', 'overflow', 'manual'] as const
export type CompactionTrigger = (typeof COMPACTION_TRIGGERS)[number]

export const COMPACTION_ERROR_CODES = [
  'NOTHING_TO_COMPACT',
  'SUMMARY_FAILED',
  'SUMMARY_EMPTY',
  'SUMMARY_TOO_LARGE',
  'ABORTED',
  'BUSY',
] as const
export type CompactionErrorCode = (typeof COMPACTION_ERROR_CODES)[number]

export interface CompactOptions {
  trigger: CompactionTrigger
  /** What the summary should keep in particular (the text after `/compact`). */
  focus?: string
  /**
   * The request the session would send next (or the one a provider refused): its route, system prompt and
   * tools are reused so the summary request shares the session's cached prefix.
   */
  request?: Pick<LlmRequest, 'route' | 'system' | 'tools'>
  /**
   * Factor (≥ 1) applied to token estimates while planning: set after a provider refused a request the
   * estimate said would fit, so the summary requests are planned with the provider's own measure.
   */
  estimateScale?: number
  signal?: AbortSignal
}

export type CompactionResult =
  | {
      ok: true
      summarySeq: number
      fromSeq: number
      toSeq: number
      tokensBefore: number
      tokensAfter: number
      requests: number
    }
  | { ok: false; code: CompactionErrorCode; reason: string }

/** What a summary covers and how it may be shortened before it is sent (the `compaction/prepare` waterfall). */
export interface CompactionInput {
  agent: Agent
  /** The messages to summarize, oldest first (copies: listeners may replace entries, never the log's). */
  messages: Message[]
  /** Estimated tokens the messages may take for the summary request to fit the window. */
  budgetTokens: number
  /** The estimate the budget is measured in (calibrated after a provider refused a request). */
  estimate(messages: readonly Message[]): number
}

/**
 * How hard a relief may cut (docs/architecture.md, "Context"):
 * - `threshold`: only when that alone brings the session under the target (else log nothing: the summary
 *   then repeats the prefix the provider cached);
 * - `old`: every oversized result outside the latest steps, even when that is not enough (a recovery round);
 * - `recent`: also the largest results of the latest steps, head and tail kept, the whole text left readable
 *   through a spill file (a recovery round, after the old ones and before a summary of older turns).
 */
export type ReliefMode = 'threshold' | 'old' | 'recent'

/**
 * Relief before a threshold compaction (the `compaction/relieve` waterfall): listeners may make the history
 * smaller without a model call (the tool-result pruner logs `tool/pruned`), so no summary may be needed.
 */
export interface ReliefInput {
  agent: Agent
  /** How hard listeners may cut (absent: `threshold`). */
  mode?: ReliefMode
  /** The window of the route about to be sent. */
  window: number
  /** Below this many tokens the session needs no summary (the compaction threshold × the window). */
  targetTokens: number
  /** The session's tokens now, measured as the trigger measures them: call it again after logging. */
  tokens(): number
  /** The estimate `tokens()` counts a changed message in (to know beforehand what a change would save). */
  estimate(messages: readonly Message[]): number
}

// The kinds checked on append and load are declared by one TypeBox schema, their type and their check (issue #28.6).

/** A text a summary request carries besides the summarized history (an instruction, a part intro, a part's summary). */
const CompactionTextData = Type.Object({ text: Type.String() })
/**
 * The window a provider says a model really has (from its refusal's text), smaller than the catalog's:
 * used for the rest of the session (and offered to the process's catalog, `ctx.llm.offerWindow`).
 */
const ContextWindowData = Type.Object({
  provider: Type.String(),
  model: Type.String(),
  contextWindow: Type.Integer({ minimum: 1 }),
  source: Type.Literal('provider-error'),
  text: Type.String(),
})
/**
 * A relief round did not find room: what was tried, in order, and why the request still does not fit.
 * The turn then fails with this reason.
 */
const ReliefFailedData = Type.Object({
  trigger: oneOf(COMPACTION_TRIGGERS),
  tried: Type.Array(Type.String()),
  tokens: Type.Number(),
  targetTokens: Type.Number(),
  reason: Type.String(),
})
/** `/compact` while a turn runs: the history is compacted (with this focus) before the next request. */
const CompactionRequestedData = Type.Object({ focus: Type.Optional(Type.String()) })
const natural = Type.Integer({ minimum: 0 })
/**
 * A compaction began: the range it summarizes, the user's focus (`/compact <focus>`) and the output limit of
 * its summary requests, logged so the request check can derive them.
 */
const CompactionStartData = Type.Object({
  trigger: oneOf(COMPACTION_TRIGGERS),
  fromSeq: natural,
  toSeq: natural,
  tokens: Type.Number(),
  window: Type.Number(),
  focus: Type.Optional(Type.String()),
  maxOutputTokens: Type.Optional(natural),
})
/** A compaction ended. On success the summary (a range-replacing `user/message`) is at `summarySeq`. */
const CompactionEndData = Type.Object({
  ok: Type.Boolean(),
  summarySeq: Type.Optional(natural),
  tokensAfter: Type.Optional(Type.Number()),
  /** Model requests made (more than one when the summary was made in chunks). */
  requests: natural,
  usage: UsageSchema,
  code: Type.Optional(oneOf(COMPACTION_ERROR_CODES)),
  reason: Type.Optional(Type.String()),
  /** The structured summary: the model's sections, the files touched from the log, what hooks added. */
  sections: Type.Optional(Type.Array(SummarySectionData)),
})
agrees<Same<Static<typeof CompactionEndData>['usage'], Usage>>(true)

declare module '@dsh/session' {
  interface SessionEventMap {
    'compaction/start': Static<typeof CompactionStartData>
    'compaction/text': Static<typeof CompactionTextData>
    'context/window': Static<typeof ContextWindowData>
    'context/relief-failed': Static<typeof ReliefFailedData>
    'compaction/requested': Static<typeof CompactionRequestedData>
    'compaction/end': Static<typeof CompactionEndData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    compaction: Compaction
  }
  interface Events {
    /**
     * @mode waterfall — before the summary request is built: listeners may shorten `input.messages` (the
     * tool-result pruner) so the request fits `budgetTokens`. Call `next()` and return what it returns.
     */
    'compaction/prepare'(input: CompactionInput, next: () => Promise<CompactionInput>): Promise<CompactionInput>
    /**
     * @mode waterfall — a threshold was passed at a step boundary, before a summary is planned: listeners
     * may log events that shrink the history the model sees (never a model call), then call `next()`. The
     * provider measures again afterwards and summarizes only if the session is still over `targetTokens`.
     * A listener that cannot bring the session under the target should log nothing: the summary then
     * repeats the request the provider has cached, and reads the history whole.
     */
    'compaction/relieve'(input: ReliefInput, next: () => Promise<void>): Promise<void>
    /**
     * @mode waterfall — a summary was written and is about to be logged: listeners (the place for
     * `PreCompact` hooks) may push sections to `draft.added`, then call `next()`. Nothing here is a model call.
     */
    'compaction/summary'(draft: SummaryDraft, next: () => Promise<void>): Promise<void>
  }
}

/**
 * Replaces the oldest history of a session with a summary (docs/architecture.md, "Context"). Owns: `compact()`, the
 * `compaction/start|end` events (ignorable: a reader without compaction still folds the summary, a core
 * `user/message` with `replaces`), the `compaction/relieve` and `compaction/prepare` waterfalls. Must not
 * own: the pressure number (ctx.tokenMeter) or the fold (`deriveMessages` in `@dsh/session`).
 */
export abstract class Compaction extends Service {
  static inject = ['sessions']

  constructor(ctx: Context) {
    super(ctx, 'compaction')
    ctx.sessions.defineKind(ctx, 'compaction/start', { ignorable: true, schema: CompactionStartData })
    ctx.sessions.defineKind(ctx, 'compaction/end', { ignorable: true, schema: CompactionEndData })
    ctx.sessions.defineKind(ctx, 'compaction/text', { ignorable: true, schema: CompactionTextData })
    ctx.sessions.defineKind(ctx, 'context/window', { ignorable: true, schema: ContextWindowData })
    ctx.sessions.defineKind(ctx, 'context/relief-failed', { ignorable: true, schema: ReliefFailedData })
    ctx.sessions.defineKind(ctx, 'compaction/requested', { ignorable: true, schema: CompactionRequestedData })
  }

  /**
   * Summarizes the oldest part of the agent's history and logs it. Never throws for a failed summary: the
   * log says why (`compaction/end { ok: false }`) and the session stays as it was.
   */
  abstract compact(agent: Agent, options: CompactOptions): Promise<CompactionResult>
}

export default Compaction
