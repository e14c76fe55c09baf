import type { Context } from '@dsh/cordis'
import type { ImageBlock, TextBlock, ToolSchema } from '@dsh/llm'
import type { ErrorData, Session } from '@dsh/session'

import type { ToolErrorCode } from './error-codes.ts'

export { TOOL_ERROR_CODES, isToolErrorCode, type ToolErrorCode } from './error-codes.ts'

/** A tool result's failure: a listed code and a message the model reads. */
export interface ToolErrorData extends ErrorData {
  code: ToolErrorCode
}

/** A failure a tool body throws on purpose: becomes an error result with its code and message. */
export class ToolError extends Error {
  override name = 'ToolError'
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message)
  }
}

/** What a tool body returns: plain text, or blocks (text and images). */
export type ToolOutput = string | { content: (TextBlock | ImageBlock)[]; error?: ToolErrorData }

/** A tool result as it is logged. */
export interface ToolResultData {
  callId: string
  content: (TextBlock | ImageBlock)[]
  error?: ToolErrorData
}

/** What the body of a call knows about where it runs. */
export interface ToolContext {
  callId: string
  agentId: string
  session: Session
  cwd: string
  /** Aborted on cancel and on the tool's timeout. */
  signal: AbortSignal
  /** The agent's scope: effects registered here end with the agent. */
  scope: Context
  /**
   * Hands on output the call prints while it runs (a command's bytes as printed), logged as `tool/output`
   * for the surfaces and never shown to the model (the result is its view). Absent when live output is off.
   */
  liveOutput?: (raw: string) => void
}

export interface ToolDefinition<A = any> {
  name: string
  /** Short and clear: what the tool does and what it returns (the model reads it). */
  description: string
  /**
   * The description one agent's requests carry, when it depends on the agent (run_code declares the tools
   * that agent's programs may call); absent: `description`.
   */
  describe?(agentId: string): string
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>
  /** Safe to run at the same time as other safe calls (it changes nothing). */
  concurrencySafe?: boolean
  /** Overrides the pipeline's default timeout. */
  timeoutMs?: number
  /** A short human summary of a call, for approvals and progress (`bash: npm test`). */
  summarize?(args: A): string
  /** Returns a reason when this call needs a person's approval (e.g. more than the sandbox allows). */
  needsApproval?(args: A, context: ToolContext): string | undefined | Promise<string | undefined>
  execute(args: A, context: ToolContext): Promise<ToolOutput>
}

/** `rule` on an ask: the grant rule an "allow for the session / always" answer would store (see @dsh/grants). */
export type Decision =
  { action: 'allow' } | { action: 'deny'; reason: string } | { action: 'ask'; reason: string; rule?: string }

/** One call on its way through the pipeline; listeners of the pipeline events may read and annotate it. */
export interface ToolInvocation {
  callId: string
  name: string
  arguments: unknown
  tool: ToolDefinition | undefined
  context: ToolContext
}

export interface ToolCallRequest {
  callId: string
  name: string
  arguments: unknown
}

export function toSchema(tool: ToolDefinition, agentId?: string): ToolSchema {
  const description = agentId !== undefined && tool.describe ? tool.describe(agentId) : tool.description
  return { name: tool.name, description, parameters: tool.parameters }
}
