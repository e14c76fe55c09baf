import { parseArgs, type ParseArgsConfig } from 'node:util'
import { type Context, Service } from '@dsh/cordis'
import type {} from '@dsh/app'

/** A flag the user got wrong: surfaces print `message` and exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>
export type ParsedArgs<T extends OptionSpec> = ReturnType<
  typeof parseArgs<{ options: T; allowPositionals: true; strict: true }>
>

declare module '@dsh/cordis' {
  interface Context {
    cmdlineArgs: CmdlineArgs
  }
}

/**
 * The tree's share of the command line (what the launcher did not consume). Owns: the raw arguments and
 * one strict parser, so every surface reports bad flags the same way. Must not own: which flags exist
 * (each surface declares its own).
 */
export default class CmdlineArgs extends Service {
  static inject = ['app']
  readonly argv: readonly string[]

  constructor(ctx: Context) {
    super(ctx, 'cmdlineArgs')
    this.argv = Object.freeze([...ctx.app.argv])
  }

  /** Parses with `options`; unknown flags and missing values throw UsageError naming the flag. */
  parse<T extends OptionSpec>(options: T, argv: readonly string[] = this.argv): ParsedArgs<T> {
    try {
      return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
    } catch (error) {
      throw new UsageError(
        (error instanceof Error ? error.message : String(error)).replace(/\. To specify a positional argument.*$/s, ''),
      )
    }
  }
}
