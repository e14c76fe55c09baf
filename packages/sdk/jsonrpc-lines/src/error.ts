import type { RpcErrorData, RpcErrorObject } from '@dsh/sdk-protocol'

/** A failure to report to the other end as a JSON-RPC error. Handlers throw it; the peer turns it into a reply. */
export class RpcError extends Error {
  override name = 'RpcError'
  constructor(
    readonly code: number,
    message: string,
    readonly data?: RpcErrorData,
  ) {
    super(message)
  }

  toObject(): RpcErrorObject {
    return { code: this.code, message: this.message, ...(this.data ? { data: this.data } : {}) }
  }
}
