// The TypeScript SDK (docs/architecture.md, "Surfaces"): launches `dsh --profile sdk` and speaks the protocol
// of @dsh/sdk-protocol over its stdio.
export {
  Harness,
  type ApprovalCallback,
  type ClientToolSpec,
  type CloseResult,
  type HarnessOptions,
  type SessionOptions,
} from './harness.ts'
export { Session, type CommandResult, type RunOptions, type RunResult, type RunUsage } from './session.ts'
export { DshError, type DshErrorCode } from './errors.ts'
export { findRuntime, repositoryLauncher, type RuntimeCommand } from './find.ts'
export {
  CLOSE_DEFAULTS,
  LINE_DEFAULTS,
  RuntimeProcess,
  type CloseStage,
  type CloseTimeouts,
  type Exit,
} from './process.ts'
export { SessionView, retryText, type Item, type ViewChange } from '@dsh/session-view'
export { APPROVAL_ANSWERS } from '@dsh/sdk-protocol'
export type {
  AnySessionEvent,
  ApprovalAnswer,
  CommandInfo,
  ApprovalRequestParams,
  InitializeResult,
  PromptContent,
  RouteParam,
  SearchHit,
  SessionSummary,
  ToolCallParams,
  ToolCallResult,
  TurnEndReason,
} from '@dsh/sdk-protocol'
