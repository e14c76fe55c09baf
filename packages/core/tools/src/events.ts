import { Type, type Static } from '@dsh/session'
import type { Decision, ToolInvocation, ToolResultData } from './types.ts'

declare module '@dsh/cordis' {
  interface Events {
    /**
     * @mode waterfall — the first phase of the check before a call (`PRE_EXECUTE_PHASES`): authority no answer
     * may widen (a subagent's ceiling). Its `next()` runs the later phases; a listener that lets the call go on
     * checks the arguments again after `next()` returns, since a later phase may have rewritten them.
     */
    'tools/pre-execute/ceiling'(invocation: ToolInvocation, next: () => Promise<Decision>): Promise<Decision>
    /** @mode waterfall — the second phase: user hooks (PreToolUse: deny, ask, rewrite the input the policies then decide on). */
    'tools/pre-execute/hooks'(invocation: ToolInvocation, next: () => Promise<Decision>): Promise<Decision>
    /**
     * @mode waterfall — the third phase, policy: decides allow | deny | ask for one call, in model order, on the
     * arguments the call will run with (plan mode, read-before-edit, grants). The default is the tool's own needsApproval.
     */
    'tools/pre-execute'(invocation: ToolInvocation, next: () => Promise<Decision>): Promise<Decision>
    /** @mode waterfall — runs the body (at the end of the chain); listeners may wrap or replace it. */
    'tools/execute'(invocation: ToolInvocation, next: () => Promise<ToolResultData>): Promise<ToolResultData>
    /** @mode waterfall — may transform a result before it is logged (spill, pruning, redaction). */
    'tools/post-execute'(invocation: ToolInvocation, next: () => Promise<ToolResultData>): Promise<ToolResultData>
  }
}

/** An approver allowed the call with these arguments instead of the model's (validated); the call ran with them. */
export const ToolEditedSchema = Type.Object({
  callId: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
})

declare module '@dsh/session' {
  interface SessionEventMap {
    'tool/edited': Static<typeof ToolEditedSchema>
  }
}
