import type { RpcErrorObject } from '@dsh/sdk-protocol'

export type DshErrorCode =
  /** No runtime to launch: the given command, `dsh` on PATH and the repository's launcher were all missing. */
  | 'RUNTIME_NOT_FOUND'
  /** The runtime exited (or never answered `initialize`); the message carries its exit and the end of its stderr. */
  | 'RUNTIME_EXITED'
  /** The runtime speaks another protocol version. */
  | 'PROTOCOL_MISMATCH'
  /** The runtime refused a request: `rpc` holds its JSON-RPC error (`rpc.data.code` is the typed code). */
  | 'REQUEST_FAILED'
  /** The runtime wrote what the client cannot read (a line over `maxLineBytes`): the connection is closed. */
  | 'PROTOCOL_ERROR'
  /** A request longer than the runtime's line limit (`initialize`'s `limits.maxLineBytes`): not sent. */
  | 'REQUEST_TOO_LARGE'
  /** The harness was closed. */
  | 'CLOSED'

/** Every failure of the SDK, typed by `code`. */
export class DshError extends Error {
  override name = 'DshError'
  constructor(
    readonly code: DshErrorCode,
    message: string,
    readonly rpc?: RpcErrorObject,
  ) {
    super(message)
  }
}
