import { RequestError } from '@agentclientprotocol/sdk'

export type AcpErrorCode =
  | 'CWD_INVALID'
  | 'MCP_UNSUPPORTED'
  | 'MCP_INVALID'
  | 'SESSION_UNKNOWN'
  | 'SESSION_UNAVAILABLE'
  | 'SESSION_CWD_MISMATCH'
  | 'PROMPT_UNSUPPORTED'
  | 'PROMPT_EMPTY'
  | 'MODES_UNAVAILABLE'
  | 'MODE_UNKNOWN'
  | 'CONFIG_UNKNOWN'
  | 'CURSOR_INVALID'
  | 'MODEL_UNKNOWN'
  | 'AGENT_PRESET_UNKNOWN'
  | 'AGENT_PRESET_TOO_LATE'
  | 'AUTH_REQUIRED'
  | 'AUTH_METHOD_UNKNOWN'
  | 'MODEL_UNAVAILABLE'
  | 'TURN_FAILED'

/** Which JSON-RPC error each failure is sent as: the client's mistake, a missing thing, or ours. */
const RPC_CODES: Record<AcpErrorCode, number> = {
  CWD_INVALID: -32602,
  MCP_UNSUPPORTED: -32602,
  MCP_INVALID: -32602,
  SESSION_UNKNOWN: -32002,
  SESSION_UNAVAILABLE: -32600,
  SESSION_CWD_MISMATCH: -32602,
  PROMPT_UNSUPPORTED: -32602,
  PROMPT_EMPTY: -32602,
  MODES_UNAVAILABLE: -32600,
  MODE_UNKNOWN: -32602,
  CONFIG_UNKNOWN: -32602,
  CURSOR_INVALID: -32602,
  MODEL_UNKNOWN: -32602,
  AGENT_PRESET_UNKNOWN: -32602,
  AGENT_PRESET_TOO_LATE: -32600,
  AUTH_REQUIRED: -32000,
  AUTH_METHOD_UNKNOWN: -32602,
  MODEL_UNAVAILABLE: -32603,
  TURN_FAILED: -32603,
}

/** Model failure codes the user fixes by providing a key: sent as ACP's auth_required error. */
export const AUTH_FAILURE_CODES: ReadonlySet<string> = new Set(['CREDENTIAL_MISSING', 'AUTH'])

/** A request dsh will not or cannot serve; `message` names what was wrong, for the editor's user. */
export class AcpError extends Error {
  override name = 'AcpError'
  constructor(
    readonly code: AcpErrorCode,
    message: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message)
  }

  toRequestError(): RequestError {
    return new RequestError(RPC_CODES[this.code], this.message, { code: this.code, ...this.detail })
  }
}

/** Any failure as a JSON-RPC error: ours keep their code, anything else is an internal error with its message. */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error
  if (error instanceof AcpError) return error.toRequestError()
  const code = typeof (error as any)?.code === 'string' ? (error as any).code : 'INTERNAL'
  return new RequestError(-32603, String((error as any)?.message ?? error), { code })
}

/**
 * A request to the editor that it answered with an error, as an Error whose message is the editor's own
 * words: the SDK turns a client's thrown error into JSON-RPC "Internal error" with the words in
 * `data.details`, and "Internal error" tells neither the model nor the user what went wrong.
 */
export function editorFailure(method: string, error: unknown): Error {
  const data = (error as { data?: unknown })?.data
  const said =
    data && typeof data === 'object'
      ? ((data as Record<string, unknown>).details ?? (data as Record<string, unknown>).message)
      : undefined
  const message = typeof said === 'string' && said ? said : error instanceof Error ? error.message : String(error)
  return new Error(`the editor refused ${method}: ${message}`, { cause: error })
}
