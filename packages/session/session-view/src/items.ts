/**
 * A logged event as every surface receives it (`@dsh/session`'s `SessionEvent`, the web's `WireEvent`, the
 * SDK's notifications): this library reads it by shape, so a browser bundle needs no runtime package.
 */
export interface LogEvent {
  type: string
  seq: number
  /** Epoch milliseconds. */
  time: number
  data: any
  ignorable?: true
}

export interface Usage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  /** The reasoning part of `output`; absent when the provider reports no separate count. */
  reasoning?: number
}

export interface ErrorInfo {
  code: string
  message: string
}

/** A content block of a user message or a tool result, as logged (text, or an image stored or inline). */
export interface Block {
  type: string
  text?: string
  mediaType?: string
  sha256?: string
  data?: string
  description?: string
}

/** An image of a user message: stored (by hash) or, before the attachments plugin took it, inline. */
export interface ImageRef {
  mediaType: string
  sha256?: string
  data?: string
}

export interface ApprovalInfo {
  requestId: string
  tool: string
  summary: string
  reason: string
  callId?: string
  /** The grant rule an "allow for this session / always" answer keeps; absent: only once or reject. */
  rule?: string
  decided?: { answer: 'allow_once' | 'allow_session' | 'allow_always' | 'reject'; by: string; note?: string }
}

import type { ProposedChange } from './change.ts'

export type ChangeState = 'proposed' | 'applied' | 'refused' | 'unknown'

/** An `llm/retry`, its fields checked one by one (logs written before `maxRetries` existed lack it). */
export interface RetryInfo {
  attempt?: number
  maxRetries?: number
  code?: string
  delayMs?: number
  /** The error of the request that failed and is being tried again. */
  failure?: ErrorInfo
}

/** Why a notice is shown, for surfaces that present some notices and not others. */
export type NoticeCause = 'summary' | 'compaction' | 'route' | 'preset' | 'sandbox' | 'approval-policy' | 'retry' | 'hook' | 'subagent' | 'plan-mode' | 'agent-preset' | 'job' | 'rewind' | 'skills'

interface ItemBase {
  /** Stable for the item's life (the React key, the ACP id). */
  key: string
  /** The seq of the last event that changed the item: equal versions, equal content. */
  version: number
  /** The seq of the event that created it. */
  seq: number
}

export interface UserItem extends ItemBase {
  kind: 'user'
  text: string
  source: string
  images: ImageRef[]
  /** The message's blocks as logged. */
  content: readonly Block[]
}

export interface AssistantItem extends ItemBase {
  kind: 'assistant'
  text: string
  reasoning: string
  /** Chunks are arriving; the message that ends them is not logged yet. */
  streaming: boolean
  error?: ErrorInfo
  interrupted?: boolean
}

export interface ToolItem extends ItemBase {
  kind: 'tool'
  callId: string
  name: string
  args: any
  /**
   * `error`: the result carries an error, or a command ended unclean (`ending`); `interrupted`: the call was
   * cut (cancel, a crash, a turn that ended without its result, a session nobody is running).
   */
  status: 'pending' | 'running' | 'done' | 'error' | 'interrupted'
  /** How a command ended when that was not a clean exit 0 (`exit 1`, `killed by SIGTERM`, `timed out`). */
  ending?: string
  /** The result's text blocks, joined. */
  output?: string
  /** The result's blocks as logged (text and images). */
  content?: readonly Block[]
  error?: ErrorInfo
  startedAt: number
  endedAt?: number
  approval?: ApprovalInfo
  /** What the call proposes to change, read from its arguments (edits, writes, inserts). */
  change?: ProposedChange
  /**
   * Whether `change` happened: `proposed` until the result, `applied` on success, `refused` when the call
   * failed or never ran (nothing changed), `unknown` when it was cut while running.
   */
  changeState?: ChangeState
  /** `args` are not the model's: a PreToolUse hook (`hook/updated-input`) or the approver (`tool/edited`) rewrote them. */
  editedBy?: 'hook' | 'approver'
  /** The model now sees a shortened result (`tool/pruned`); the log and this card keep it whole. */
  pruned?: { seq: number; note?: string }
  /**
   * What the call printed while it ran (`tool/output`), kept after its result and after a crash cut it:
   * `text` as a terminal shows it, `raw` the bytes as printed (colours), `capped` when the live log stopped
   * at its cap (the result holds the rest).
   */
  printed?: PrintedOutput
}

export interface PrintedOutput {
  text: string
  raw: string
  capped: boolean
}

export interface ApprovalItem extends ItemBase {
  kind: 'approval'
  approval: ApprovalInfo
}

export interface NoticeItem extends ItemBase {
  kind: 'notice'
  text: string
  tone: 'info' | 'warn' | 'muted'
  cause: NoticeCause
  retry?: RetryInfo
  /** A summary: the seq range of the history it replaces in what the model sees. */
  replaces?: { fromSeq: number; toSeq: number }
}

export interface TurnEndItem extends ItemBase {
  kind: 'turn-end'
  reason: string
  /** The error to show here: absent when the failed answer just above already shows it. */
  error?: ErrorInfo
  /** The error the `turn/end` logged, shown or not. */
  loggedError?: ErrorInfo
  usage: Usage
  startedAt?: number
  endedAt: number
}

/** A child agent this session started (`subagent/start` … `subagent/end`): a card linking the child's session. */
export interface SubagentItem extends ItemBase {
  kind: 'subagent'
  /** The child's own session: open it to see what the child did. */
  childSessionId: string
  description: string
  agentType: string
  /** How it was made: `spawn`, `fork` or `acp`. */
  via: string
  /** The most authority the child runs under. */
  ceiling: string
  status: 'running' | 'completed' | 'failed' | 'aborted'
  /** The parent's call that started it. */
  callId?: string
  /** Its final text, as the parent's model was given it. */
  text?: string
  error?: ErrorInfo
  /** Turns it ran (a follow-up adds one). */
  turns: number
  startedAt: number
  endedAt?: number
}

/** What the conversation shows. Items are immutable: a change replaces the object (so memoised rows compare by identity or version). */
export type Item = UserItem | AssistantItem | ToolItem | ApprovalItem | NoticeItem | TurnEndItem | SubagentItem

/**
 * What one event changed, for surfaces that send deltas (ACP) or re-render rows (web). `cause` is the type of
 * the event that made the change; `delta` is the streamed text an `assistant/chunk` added.
 */
/** One entry of the agent's task list (`todo/updated`), as ACP's plan entries have it too. */
export interface TodoEntry {
  content: string
  status: 'pending' | 'in_progress' | 'completed'
  priority: 'high' | 'medium' | 'low'
}

export type ViewChange =
  | { op: 'added'; item: Item; cause: string; delta?: { kind: 'text' | 'reasoning'; text: string } }
  | { op: 'updated'; item: Item; previous: Item; cause: string; delta?: { kind: 'text' | 'reasoning'; text: string } }
  | { op: 'removed'; item: Item; cause: string }
  /** A model request's usage was counted (every `assistant/message`, even one that shows no item). */
  | { op: 'usage'; usage: Usage; cause: string }
  /** `openTurn`, `route`, `preset`, `window`, `lastUsage` or `todos` changed. */
  | { op: 'session'; cause: string }
