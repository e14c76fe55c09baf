import { type Context, Service } from '@dsh/cordis'
import type { SandboxAuthority } from './modes.ts'

/**
 * What confinement actually applied to one command:
 * - `full`: writes are possible only under the authority's writable roots (plus a private scratch /tmp that
 *   vanishes with the command);
 * - `partial`: confined, but some shared places outside the roots stay writable (Seatbelt's temp folders);
 * - `none`: unconfined (`danger-full-access`, or a provider that does not confine).
 * The network a command gets is the authority's `network` (see SandboxNetwork), applied in full or refused.
 */
export type Enforcement = 'none' | 'full' | 'partial'

/** The backend check, done once by running a confined no-op. A session records it as it is. */
export interface SandboxProbe {
  /** `bubblewrap`, `seatbelt`, or `none` when the platform has no backend. */
  backend: string
  available: boolean
  /** Why it is (un)available, naming the executable and what failed, e.g. "bubblewrap (bwrap) not found on PATH". */
  reason: string
  /** The absolute path of the backend's executable, when found. */
  executable?: string
}

export interface ConfineOptions {
  /** Where the command will run; it stays visible (read-only unless under a writable root). */
  cwd: string
  authority: SandboxAuthority
  /**
   * The command will own a private pseudo-terminal. The backend then keeps it as the controlling terminal
   * (no new session), since its input is ours alone; without a terminal the command gets a new session.
   */
  terminal?: boolean
}

export interface Confinement {
  /** The argv to spawn instead of the original one. */
  argv: string[]
  enforcement: Enforcement
  /** The backend used (`none` when the mode asks for no confinement). */
  backend: string
}

export type SandboxErrorCode = 'SANDBOX_UNAVAILABLE' | 'SANDBOX_INVALID_AUTHORITY'

/** A command that may not run: no working backend for a confined mode, or an authority that cannot be applied. */
export class SandboxError extends Error {
  override name = 'SandboxError'
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
  ) {
    super(message)
  }
}

declare module '@dsh/cordis' {
  interface Context {
    sandbox: Sandbox
  }
}

/**
 * Confinement as a spawn wrapper (docs/security.md). Owns: turning an argv and an authority into a confined argv,
 * and the probe of its backend. Must not own: which mode is in force (the sandbox policy derives it from
 * the log), spawning (ctx.subprocess), or approval. Fails closed: a confined mode without a working backend
 * is a SandboxError, never an unconfined argv.
 */
export abstract class Sandbox extends Service {
  constructor(ctx: Context) {
    super(ctx, 'sandbox')
  }

  /** Probes the backend once (later calls return the same result). */
  abstract probe(): Promise<SandboxProbe>

  /** Wraps `argv` for `options.authority`; throws SandboxError when it cannot confine as asked. */
  abstract confine(argv: string[], options: ConfineOptions): Promise<Confinement>
}
