export type CredentialErrorCode =
  | 'CREDENTIAL_MISSING' // no source holds the credential
  | 'CREDENTIAL_NAME_INVALID' // a name that is not an environment-variable name
  | 'CREDENTIAL_VALUE_INVALID' // an empty value, or one with line breaks
  | 'CREDENTIALS_FILE_INVALID' // the credentials file cannot be read as a mapping of names to values

/**
 * A typed credentials failure. `credential` is the name involved (Error's own `name` stays the class name,
 * so stack traces read `CredentialError: …`). The message never holds a value.
 */
export class CredentialError extends Error {
  override name = 'CredentialError'
  constructor(
    readonly code: CredentialErrorCode,
    readonly credential: string | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/** Names are environment-variable names: `DEEPSEEK_API_KEY`, `my_token`. */
export const CREDENTIAL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/

export function assertCredentialName(name: string): void {
  if (typeof name !== 'string' || !CREDENTIAL_NAME_PATTERN.test(name)) {
    throw new CredentialError(
      'CREDENTIAL_NAME_INVALID',
      String(name),
      `"${String(name)}" is not a credential name: use an environment-variable name such as DEEPSEEK_API_KEY`,
    )
  }
}
