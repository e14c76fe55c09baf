import { RpcError } from '@dsh/jsonrpc-lines'
import { RPC_ERRORS } from '@dsh/sdk-protocol'

export { RpcError }

export const invalidParams = (field: string, problem: string) =>
  new RpcError(RPC_ERRORS.INVALID_PARAMS, `Invalid params: "${field}" ${problem}`, { field })

/** A refusal with a typed code the runtime names (session not found, locked, fork inside a turn, …). */
export const requestFailed = (code: string, message: string, field?: string) =>
  new RpcError(RPC_ERRORS.REQUEST_FAILED, message, { code, ...(field ? { field } : {}) })

/**
 * Maps anything a handler threw to a reply. Typed failures of the runtime (an error with a string `code`,
 * like SessionError or LlmError) keep their code; anything else is an internal error, named by its message.
 */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error
  const message = String((error as any)?.message ?? error)
  const code = (error as any)?.code
  // A system error (EISDIR, EACCES…) carries `syscall`: that is the runtime failing, not a rule refusing.
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) && !(error as any).syscall)
    return requestFailed(code, message)
  return new RpcError(RPC_ERRORS.INTERNAL_ERROR, `Internal error: ${message}`)
}
