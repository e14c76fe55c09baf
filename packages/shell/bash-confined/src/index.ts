import type { ConfineOptions, Confinement } from '@dsh/sandbox'
import { BashConfig, BashShell } from '@dsh/bash-kit'

export type Config = BashConfig

/**
 * ctx.shell running bash through ctx.sandbox: each one-shot command, and a session's whole shell, is
 * wrapped for the caller's authority. When the sandbox cannot confine (no working backend in a confined
 * mode), the SandboxError (SANDBOX_UNAVAILABLE) reaches the caller and nothing runs.
 */
export default class BashConfined extends BashShell {
  static override inject = ['subprocess', 'sandbox']
  static Config = BashConfig

  protected wrap(argv: string[], options: ConfineOptions): Promise<Confinement> {
    return this.ctx.sandbox.confine(argv, options)
  }
}
