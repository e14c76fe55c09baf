/** A rename, archive, delete, export or import that cannot be done; `code` says why. */
export class SessionAdminError extends Error {
  override name = 'SessionAdminError'
  constructor(
    readonly code: 'INVALID_TITLE' | 'INVALID_ID' | 'SESSION_RUNNING',
    message: string,
  ) {
    super(message)
  }
}
