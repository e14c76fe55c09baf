import { type Context, Service } from '@dsh/cordis'
import { CredentialError } from './errors.ts'

export { assertCredentialName, CREDENTIAL_NAME_PATTERN, CredentialError, type CredentialErrorCode } from './errors.ts'
export { redactionMarker, redactSecrets } from './redact.ts'

/** Where a credential's value comes from (`missing` when nowhere). */
export type CredentialSource = 'env' | 'home-file' | 'dotenv' | 'missing'

/** What can be said about a credential without showing it. */
export interface CredentialStatus {
  name: string
  set: boolean
  source: CredentialSource
  /** The file holding it, for `home-file` and `dotenv`. */
  location?: string
}

declare module '@dsh/cordis' {
  interface Context {
    credentials: Credentials
  }
}

/**
 * Secrets referenced by name (`DEEPSEEK_API_KEY`). Owns: where values come from, resolving them per call,
 * storing them, and keeping them out of text (`redact`). Must not own: which credential a provider needs
 * (its adapter names it), non-secret configuration (settings), or logging a value, ever.
 */
export abstract class Credentials extends Service {
  constructor(ctx: Context) {
    super(ctx, 'credentials')
  }

  /** The value now (never cached across calls, so a rotated key is picked up), or undefined. */
  abstract resolve(name: string): Promise<string | undefined>

  /** Whether `name` is set and where from, without the value. */
  abstract describe(name: string): Promise<CredentialStatus>

  /** Stores `value` in the provider's own store (for credentials-local: the home credentials file). */
  abstract set(name: string, value: string): Promise<void>

  /** Removes `name` from the provider's own store; true when it was there. Other sources are untouched. */
  abstract remove(name: string): Promise<boolean>

  /** `text` with every known secret value replaced by `«redacted:NAME»`. Synchronous: use it in log paths. */
  abstract redact(text: string): string

  /** How the user can provide `name`, for the missing-credential message (names places, never values). */
  abstract howToSet(name: string): string

  /** The value, or CredentialError CREDENTIAL_MISSING naming the variable and where it was looked for. */
  async requireCredential(name: string): Promise<string> {
    const value = await this.resolve(name)
    if (value !== undefined) return value
    throw new CredentialError('CREDENTIAL_MISSING', name, `${name} is not set: ${this.howToSet(name)}`)
  }
}
