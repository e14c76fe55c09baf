// Code mode: where the model's programs run (docs/architecture.md, "Code mode"; issue #30).
import { type Context, Service } from '@dsh/cordis'

declare module '@dsh/cordis' {
  interface Context {
    codeRuntime: CodeRuntime
  }
}

/** Why a program did not finish with a value (each is also a `ToolErrorCode` of @dsh/tools). */
export const CODE_ERROR_CODES = [
  'CODE_SYNTAX',
  'CODE_THROWN',
  'CODE_TIMEOUT',
  'CODE_MEMORY',
  'CODE_LIMIT',
  'CODE_CRASHED',
  'ABORTED',
] as const
export type CodeErrorCode = (typeof CODE_ERROR_CODES)[number]

/** Where in the model's code a failure is (1-based, in the code as the model wrote it). */
export interface CodePosition {
  line: number
  column: number
}

/** A program's failure: a code, a message the model reads, and where in its code, when known. */
export interface CodeError {
  code: CodeErrorCode
  message: string
  position?: CodePosition
}

/**
 * What one bridged call came to, as the program sees it: the result's text, or a failure the program gets
 * thrown (`ToolCallError` with this code and message). Plain data: nothing of the host crosses into a program.
 */
export type BridgeReply = { ok: true; text: string } | { ok: false; code: string; message: string }

/** One program to run. */
export interface CodeRunRequest {
  /** The model's TypeScript: a function body (top-level `await` and `return` allowed). */
  code: string
  /** The functions the program may call, one per tool name. */
  tools: string[]
  /** Wall time of the program's own running; time waiting for its tool calls does not count. */
  timeoutMs: number
  /** Cancel of the turn: the program is ended at once. */
  signal: AbortSignal
  /**
   * Runs one call the program made (`argumentsJson`: its arguments as JSON text) and resolves to its reply;
   * must not throw (a failure is an `ok: false` reply).
   */
  call(name: string, argumentsJson: string): Promise<BridgeReply>
}

/** How a program ended. */
export interface CodeRunResult {
  /** What it printed (console.log/error/warn, each line as printed), at most the runtime's output cap. */
  output: string
  /** Characters of output past the cap that were dropped. */
  outputDropped: number
  /** Its return value as JSON text (absent: undefined, or it failed). */
  value?: string
  error?: CodeError
  /** Calls it made through the bridge. */
  toolCalls: number
  wallMs: number
}

/**
 * Runs the model's programs (definition). Owns: the execution of one program in isolation — stripping types,
 * limits (wall time, memory, output, calls), ending it on cancel — and the bridge by which it calls tools.
 * Must not own: what a call may do (the caller passes `call`, which goes through the tool pipeline), what the
 * model is told, or the result's storage.
 */
export abstract class CodeRuntime extends Service {
  constructor(ctx: Context) {
    super(ctx, 'codeRuntime')
  }
  abstract run(request: CodeRunRequest): Promise<CodeRunResult>
}
