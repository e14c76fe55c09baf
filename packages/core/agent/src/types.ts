import type { ImageBlock, LlmError, LlmRequest, TextBlock } from '@dsh/llm'
import type { ErrorData, TurnEndReason, UserMessageSource } from '@dsh/session'
import type { Agent } from './agent.ts'

export type InboxMode = 'followup' | 'steer' | 'inject'

/** What a caller may send: plain text or blocks. */
export type UserContent = string | (TextBlock | ImageBlock)[]

export interface QueuedInput {
  mode: InboxMode
  content: (TextBlock | ImageBlock)[]
  /** Set by the caller to follow its input in the log (a receipt id). */
  messageId: string
}

export interface TurnResult {
  turnId: string
  reason: TurnEndReason
  /** The last assistant text of the turn. */
  text: string
  error?: ErrorData
}

export type AgentStatus = 'idle' | 'running' | 'disposed'

/** A message a step enters into the log as `user/message`. */
export interface EnteredMessage {
  content: (TextBlock | ImageBlock)[]
  source: UserMessageSource
  messageId?: string
}

export type PreStepDecision = { action: 'enter'; messages: EnteredMessage[] } | { action: 'reject'; reason: string }

/** A turn that would complete now: its last step made no tool call and no steering input waits. */
export interface TurnCompletion {
  agent: Agent
  turnId: string
  step: number
  /** How many times listeners already continued this turn. */
  continued: number
}

/** `continue`: one more step, entering `messages` first (a Stop hook's reason); the step limit still applies. */
export type TurnCompletionDecision = { action: 'complete' } | { action: 'continue'; messages: EnteredMessage[] }

export interface PreStep {
  agent: Agent
  turnId: string
  step: number
  input: QueuedInput[]
}

/** A request on its way to the model; `agent/request` listeners may change `request` (route, sampling). */
export interface RequestDraft {
  agent: Agent
  turnId: string
  step: number
  request: LlmRequest
}

export interface RequestFailure {
  agent: Agent
  error: LlmError
  attempt: number
  request: LlmRequest
}

export type RetryDecision = { retry: false } | { retry: true; delayMs: number; reason: string }

export function toBlocks(content: UserContent): (TextBlock | ImageBlock)[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content
}
