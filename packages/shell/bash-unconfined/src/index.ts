import type { ConfineOptions, Confinement } from '@dsh/sandbox'
import { BashConfig, BashShell } from '@dsh/bash-kit'

export type Config = BashConfig

/**
 * ctx.shell running bash straight on this machine. It confines nothing and says so: every result carries
 * enforcement `none`, whatever the authority (which it accepts and ignores).
 */
export default class BashUnconfined extends BashShell {
  static override inject = ['subprocess']
  static Config = BashConfig

  protected async wrap(argv: string[], _options: ConfineOptions): Promise<Confinement> {
    return { argv, enforcement: 'none', backend: 'none' }
  }
}
