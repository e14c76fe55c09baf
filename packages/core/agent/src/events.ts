import type { LlmRequest, Route } from '@dsh/llm'
import type { Agent } from './agent.ts'
import type {
  AgentStatus,
  PreStep,
  PreStepDecision,
  RequestDraft,
  RequestFailure,
  RetryDecision,
  TurnCompletion,
  TurnCompletionDecision,
  TurnResult,
} from './types.ts'

declare module '@dsh/cordis' {
  interface Events {
    /** @mode waterfall — before a step: enter the claimed input as messages, or reject the step (the turn ends `blocked`). */
    'agent/pre-step'(step: PreStep, next: () => Promise<PreStepDecision>): Promise<PreStepDecision>
    /** @mode waterfall — may change `draft.request` (route, sampling) before it is checked and sent. */
    'agent/request'(draft: RequestDraft, next: () => Promise<void>): Promise<void>
    /** @mode serial — last look at the request before the paid call; `ctx.llm` then checks it against the log. */
    'agent/before-model-call'(agent: Agent, request: LlmRequest): Promise<void>
    /** @mode waterfall — a model request failed: decide whether to retry (llm-retry) or give up. */
    'agent/request-error'(failure: RequestFailure, next: () => Promise<RetryDecision>): Promise<RetryDecision>
    /**
     * @mode waterfall — the turn would complete (no tool call, no steering input): listeners may continue it
     * with one more step that enters their messages (hooks' Stop). Loops that do not emit it cannot be continued.
     */
    'agent/turn-complete'(
      completion: TurnCompletion,
      next: () => Promise<TurnCompletionDecision>,
    ): Promise<TurnCompletionDecision>
    /** @mode serial — the turn is about to end; listeners may still append to the log. */
    'agent/turn-stopping'(agent: Agent, result: TurnResult): Promise<void>
    /** @mode bail — the route of new sessions; the first listener that returns one wins, else the `agents` row's. */
    'agent/default-route'(): Route | undefined
    /** @mode emit — a new agent (created, resumed or forked) is ready, before its first turn. */
    'agent/created'(agent: Agent): void
    /** @mode emit — an agent's status changed. */
    'agent/status'(agent: Agent, status: AgentStatus): void
  }
}
