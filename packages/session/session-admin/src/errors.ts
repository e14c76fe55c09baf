/** A rename, archive, delete, export or import that cannot be done; `code` says why. */
export class SessionAdminError extends Error {
  override name = 'SessionAdminError'
  constructor(
    readonly code:
      | 'INVALID_TITLE'
      | 'INVALID_ID'
      | 'SESSION_RUNNING'
      | 'ARCHIVE_INVALID'
      | 'ARCHIVE_TOO_LARGE'
      | 'ARCHIVE_EXISTS'
      | 'ARCHIVE_WORKSPACE',
    message: string,
  ) {
    super(message)
  }
}
