import type { Context } from '@dsh/cordis'
import type { DrainReason } from '@dsh/app'
import type {} from '@dsh/agent'
import type {} from '@dsh/approval'
import { UsageError } from '@dsh/cmdline'
import type {} from '@dsh/llm'
import type {} from '@dsh/session'
import { Config } from './config.ts'
import { TuiController } from './controller.ts'
import { startInk } from './ink.tsx'
import { startPlain } from './plain.ts'

export { Config }
export { TuiController, ACTOR, type Snapshot, type Entry } from './controller.ts'
export { itemLines, finished, type Line, type LineOptions } from './lines.ts'
export { App } from './app.tsx'
export { startInk } from './ink.tsx'
export { themeFor } from './theme.ts'

export const name = 'tui'
export const inject = ['app', 'cmdlineArgs', 'sessions', 'agents', 'approval', 'llm', 'tools']

const OPTIONS = { plain: { type: 'boolean' } } as const

/** What the launch asked for: a first message, the resume picker, or a stored session to open. */
export interface TuiInvocation {
  plain: boolean
  first?: string
  resume?: { id?: string }
}

export function readInvocation(ctx: Context): TuiInvocation {
  const { values, positionals } = ctx.cmdlineArgs.parse(OPTIONS)
  const plain = !!values.plain
  if (positionals[0] === 'resume') {
    if (positionals.length > 2)
      throw new UsageError('dsh resume [id] in the terminal UI takes no message: type it once the session is open')
    return { plain, resume: positionals[1] ? { id: positionals[1] } : {} }
  }
  const first = positionals.join(' ').trim()
  return { plain, ...(first ? { first } : {}) }
}

/**
 * The terminal UI surface (docs/architecture.md, "Surfaces"): on `app/launched` it draws the session in the
 * launch's terminal (Ink), or prints lines in plain mode (`--plain`, `TERM=dumb`, or no terminal). Closing it
 * (Ctrl+D, Ctrl+C twice, `/exit`, a signal) cancels a running turn and waits until its end is durable
 * (`app/draining`): a turn does not outlive the TUI.
 */
export function apply(ctx: Context, config: Config) {
  let controller: TuiController | undefined
  let stop: (() => void) | undefined
  const { stdin, stdout, stderr } = ctx.app.stdio
  // The terminal went away (the window closed, ssh dropped): writes fail with EIO/EPIPE. That is the user
  // leaving, not a crash: the launch ends and drains like any exit.
  const onStdoutError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EIO' && error.code !== 'EPIPE') ctx.logger('tui').warn(`stdout: ${error.message}`)
    ctx.app.requestExit(0)
  }
  ctx.effect(() => {
    stdout.on('error', onStdoutError)
    return () => void stdout.off('error', onStdoutError)
  }, 'stdout errors')
  ctx.on('app/launched', () => {
    void (async () => {
      let invocation: TuiInvocation
      try {
        invocation = readInvocation(ctx)
      } catch (error) {
        stderr.write(`dsh: ${error instanceof Error ? error.message : String(error)}\n`)
        return ctx.app.requestExit(2)
      }
      controller = new TuiController(ctx, config, ctx.app.cwd)
      const plain = invocation.plain || process.env.TERM === 'dumb' || !stdout.isTTY || !stdin.isTTY
      stop = plain ? startPlain(controller, stdin, stdout) : startInk(controller, config, { stdin, stdout, stderr })
      try {
        await controller.refreshCommands()
        if (invocation.resume?.id) await controller.openSession(invocation.resume.id)
        else if (invocation.resume) await controller.showPicker()
        if (invocation.first) await controller.submit(invocation.first)
      } catch (error) {
        controller.note(error instanceof Error ? error.message : String(error), 'error')
      }
    })()
  })
  ctx.on('app/draining', async (_reason: DrainReason) => {
    await controller?.drain()
    stop?.()
    stop = undefined
  })
  ctx.effect(() => () => stop?.(), 'terminal UI')
}
