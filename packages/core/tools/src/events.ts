import type { Decision, ToolInvocation, ToolResultData } from './types.ts'

declare module '@dsh/cordis' {
  interface Events {
    /** @mode waterfall — decides allow | deny | ask for one call, in model order. The default is the tool's own needsApproval. */
    'tools/pre-execute'(invocation: ToolInvocation, next: () => Promise<Decision>): Promise<Decision>
    /** @mode waterfall — runs the body (at the end of the chain); listeners may wrap or replace it. */
    'tools/execute'(invocation: ToolInvocation, next: () => Promise<ToolResultData>): Promise<ToolResultData>
    /** @mode waterfall — may transform a result before it is logged (spill, pruning, redaction). */
    'tools/post-execute'(invocation: ToolInvocation, next: () => Promise<ToolResultData>): Promise<ToolResultData>
  }
}

declare module '@dsh/session' {
  interface SessionEventMap {
    /** An approver allowed the call with these arguments instead of the model's (validated); the call ran with them. */
    'tool/edited': { callId: string; arguments: Record<string, unknown> }
  }
}
