import type { CompactionErrorCode } from '@dsh/compaction'
import type { Message } from '@dsh/llm'
import type { Entry } from './entries.ts'
import { chooseCut, pack, type Cut } from './plan.ts'

export interface SummaryPlanOptions {
  /** The route's context window. */
  window: number
  /** The route's output limit, when the model has one. */
  modelMaxOutputTokens?: number
  /** Estimated tokens of the system prompt and tools the summary request repeats. */
  headerTokens: number
  /** Estimated tokens of the longest instruction a summary request appends. */
  instructionTokens: number
  estimate(message: Message): number
  /** Refuse a cut that replaces fewer estimated tokens than this (a summary could be as long). */
  minSummarizedTokens: number
  config: { keepRecentRatio: number; fitRatio: number; summaryMaxOutputTokens: number; keepInstructions: boolean }
}

export type SummaryPlan =
  | {
      ok: true
      cut: Cut
      /** The session's own prefix `[0, cut)`: what the summary reads (and what a provider has cached). */
      messages: Message[]
      /** Estimated tokens the messages of one summary request may take. */
      budget: number
      maxOutputTokens: number
      /** Summary requests for the parts (1 when the prefix fits one request; a merge request comes on top). */
      parts: number
    }
  | { ok: false; code: CompactionErrorCode; reason: string }

/**
 * Compaction planning without the model call: the cut, the prefix the summary reads, and the budget that
 * decides whether it is summarized in one request or in parts. Pure, so it is benchmarked on large logs.
 */
export function planSummary(entries: readonly Entry[], options: SummaryPlanOptions): SummaryPlan {
  const { window, config } = options
  if (!window) return { ok: false, code: 'NOTHING_TO_COMPACT', reason: "the route's context window is unknown" }
  const choice = chooseCut(entries, {
    keepRecentTokens: Math.floor(window * config.keepRecentRatio),
    keepInstructions: config.keepInstructions,
    estimate: options.estimate,
  })
  if (!choice.ok) return { ok: false, code: 'NOTHING_TO_COMPACT', reason: choice.reason }
  const maxOutputTokens = Math.min(config.summaryMaxOutputTokens, options.modelMaxOutputTokens ?? Infinity)
  if (choice.cut.summarizedTokens < options.minSummarizedTokens) {
    return {
      ok: false,
      code: 'NOTHING_TO_COMPACT',
      reason: `only about ${choice.cut.summarizedTokens} tokens could be summarized, less than a summary may take (${options.minSummarizedTokens})`,
    }
  }
  const budget =
    Math.floor(window * config.fitRatio) - options.headerTokens - options.instructionTokens - maxOutputTokens
  if (budget <= 0) {
    const fixed = options.headerTokens + options.instructionTokens + maxOutputTokens
    return {
      ok: false,
      code: 'SUMMARY_TOO_LARGE',
      reason: `the system prompt, tools, instruction and summary output alone need about ${fixed} tokens; a summary request may use ${Math.floor(window * config.fitRatio)}`,
    }
  }
  const messages = entries.slice(0, choice.cut.cut).map((entry) => entry.message)
  const size = choice.cut.historyTokens - choice.cut.keptTokens
  const parts = size <= budget ? 1 : pack(messages, budget, options.estimate).length
  return { ok: true, cut: choice.cut, messages, budget, maxOutputTokens, parts }
}
