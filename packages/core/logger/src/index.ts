import { type Context, Logger, type Message } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { REPORTED_BY_LAUNCHER, type AppInfo } from '@dsh/app'

export interface Config {
  level: 'error' | 'warn' | 'info' | 'debug'
  colors: boolean
  stacks: boolean
}

export const name = 'logger'

export const Config: Schema<Config> = Schema.object({
  level: Schema.union(['error', 'warn', 'info', 'debug'] as const)
    .default('warn')
    .description('Least severe level written to stderr.'),
  colors: Schema.boolean().default(false).description('ANSI colours (only when stderr is a terminal).'),
  stacks: Schema.boolean()
    .default(false)
    .description('Print stack traces of logged errors (otherwise only their messages).'),
})

const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const

/** Exports log messages to stderr. Stdout is reserved for surfaces (the SDK and ACP speak protocol there). */
export function apply(ctx: Context, config: Config) {
  // The launch's stderr (an in-process test driver's stream, or the process's); a tree without app-boot has none.
  const stderr = ((ctx as any).get('app') as AppInfo | undefined)?.stdio?.stderr ?? process.stderr
  const colors: number | false = config.colors && stderr.isTTY ? 3 : false
  const exporter = {
    colors,
    levels: { base: LEVELS[config.level] },
    export(message: Message) {
      if (message.level > LEVELS[config.level]) return
      if (message.args.some((arg) => arg instanceof Error && (arg as any)[REPORTED_BY_LAUNCHER])) return
      const args = config.stacks
        ? message.args
        : message.args.map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : arg))
      stderr.write(Logger.format(exporter, { ...message, args }) + '\n')
    },
  }
  ctx.effect(() => ctx.logger.exporter(exporter as any), 'stderr log exporter')
}
