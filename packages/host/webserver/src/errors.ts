/** Why a request was refused or failed; `status` is the HTTP status the host answers with. */
export type WebErrorCode =
  | 'HOST_REFUSED'
  | 'ORIGIN_REFUSED'
  | 'SIGN_IN_REQUIRED'
  | 'SIGN_IN_INVALID'
  | 'LINK_REFUSED'
  | 'LOCAL_ONLY'
  | 'METHOD_NOT_ALLOWED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BODY_TOO_LARGE'
  | 'BAD_JSON'
  | 'BAD_PARAMS'
  | 'UNKNOWN_METHOD'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'UNAVAILABLE'
  | 'INTERNAL'

const STATUS: Record<WebErrorCode, number> = {
  HOST_REFUSED: 421,
  ORIGIN_REFUSED: 403,
  SIGN_IN_REQUIRED: 401,
  SIGN_IN_INVALID: 401,
  LINK_REFUSED: 403,
  LOCAL_ONLY: 403,
  METHOD_NOT_ALLOWED: 405,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  BAD_JSON: 400,
  BAD_PARAMS: 400,
  UNKNOWN_METHOD: 404,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNAVAILABLE: 503,
  INTERNAL: 500,
}

/** A typed failure of the web host or of an API method; API handlers throw it to pick the status. */
export class WebError extends Error {
  override name = 'WebError'
  constructor(
    readonly code: WebErrorCode,
    message: string,
  ) {
    super(message)
  }
  get status(): number {
    return STATUS[this.code]
  }
}

/**
 * The status and body for anything a handler threw. Errors of other seams carry their own `code`
 * (SESSION_LOCKED, SETTINGS_INVALID, …): the page shows it and the message; their status is 404 for a
 * `*_NOT_FOUND`, else 400. Anything without a code is a bug of ours: 500.
 */
export function describeFailure(error: unknown): { status: number; code: string; message: string } {
  if (error instanceof WebError) return { status: error.status, code: error.code, message: error.message }
  const code = (error as { code?: unknown })?.code
  const message = error instanceof Error ? error.message : String(error)
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code))
    return { status: code.endsWith('NOT_FOUND') ? 404 : 400, code, message }
  return { status: 500, code: 'INTERNAL', message }
}
