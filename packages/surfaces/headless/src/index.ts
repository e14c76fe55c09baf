import type { Context } from '@dsh/cordis'
import type { DrainReason } from '@dsh/app'
import type {} from '@dsh/agent'
import type {} from '@dsh/approval'
import { UsageError } from '@dsh/cmdline'
import type {} from '@dsh/llm'
import { SessionError } from '@dsh/session'
import type {} from '@dsh/session-query'
import type {} from '@dsh/tools'
import { listSessions, showSession } from './commands.ts'
import { archiveSession, deleteSession, renameSession, transferSessions } from './manage.ts'
import { reindexSessions, searchSessions } from './search.ts'
import { diffSession, rewindSession } from './review.ts'
import { listGrants, revokeGrant } from './grants.ts'
import { listMcpServers } from './mcp-list.ts'
import type {} from '@dsh/usage-prices'
import { addMcpServer, removeMcpServer, testMcpServer } from './mcp-edit.ts'
import { showUsage } from './usage.ts'
import { Config } from './config.ts'
import { asksForRunLines, lineText, notStartedResult } from '@dsh/headless-lines'
import { readInvocation, type Invocation } from './options.ts'
import { HeadlessRun, RunFailure, type RunIO } from './run.ts'
import { askYesNo, readAll } from './stdin.ts'

export { Config }
export { jsonLine, type JsonLine } from './json-lines.ts'
export { type UsageInvocation } from './usage-options.ts'
export {
  readInvocation,
  RUN_OPTIONS,
  type Invocation,
  type RunInvocation,
  type ListInvocation,
  type ShowInvocation,
  type GrantsListInvocation,
  type GrantsRevokeInvocation,
  type SessionSource,
} from './options.ts'

export const name = 'headless'
export const inject = [
  'app',
  'cmdlineArgs',
  'sessions',
  'sessionAdmin',
  'agents',
  'llm',
  'approval',
  'tools',
  'settings',
  'usagePrices',
]

/** Session errors that mean the user named something that is not there (or a seq that cannot be forked). */
const USER_SESSION_ERRORS = new Set(['SESSION_NOT_FOUND', 'FORK_INSIDE_TURN', 'FORK_OUT_OF_RANGE', 'WORKSPACE_REFUSED'])

/**
 * The headless surface (docs/architecture.md, "Boot and the process"): when the launcher hands over the
 * launch (`app/launched`), it runs one command from the tree's arguments — a task, a resume, a fork, or a
 * sessions listing — and ends the launch with `ctx.app.requestExit(code)`. On SIGINT the launcher's
 * `app/draining` lets it cancel the running turn and wait until the log holds its `turn/end`.
 */
export function apply(ctx: Context, config: Config) {
  let run: HeadlessRun | undefined
  // A reader that goes away (`dsh sessions show <id> --json | head`) ends the output, not the run: without
  // a listener, EPIPE on stdout would be an uncaught error event.
  let stdoutClosed = false
  const onStdoutError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') ctx.logger('headless').warn(`stdout: ${error.message}`)
    stdoutClosed = true
  }
  // The launch's streams: the process's, or those of an in-process driver (`ctx.app.stdio`).
  const { stdin, stdout, stderr } = ctx.app.stdio
  ctx.effect(() => {
    stdout.on('error', onStdoutError)
    return () => void stdout.off('error', onStdoutError)
  }, 'stdout errors')
  const io: RunIO = {
    stdout: { write: (text) => stdoutClosed || stdout.write(text), isTTY: stdout.isTTY },
    stderr,
    readStdin: (signal) => readAll(stdin, signal),
    ...(stdin.isTTY && stderr.isTTY ? { confirm: (question: string) => askYesNo(question, stdin, stderr) } : {}),
  }

  let disposed = false
  ctx.effect(() => () => void (disposed = true), 'launch ended')
  ctx.on('app/launched', () => {
    void launch()
      // A failed write to a closed pipe reports its EPIPE on a later tick: let it reach our listener first.
      .then((code) => new Promise<number>((resolve) => setImmediate(() => resolve(code))))
      .then((code) => {
        if (!disposed) ctx.app.requestExit(code) // after a signal the launcher has already ended the launch
      })
  })
  ctx.on('app/draining', async (reason: DrainReason) => {
    await run?.interrupt(reason)
  })

  async function launch(): Promise<number> {
    const started = performance.now()
    let json = false
    let invocation: Invocation
    try {
      try {
        invocation = readInvocation(ctx.cmdlineArgs.argv, (options, argv) => ctx.cmdlineArgs.parse(options, argv))
      } catch (error) {
        // Arguments that do not parse still get their result line when they asked for run lines.
        json = asksForRunLines(ctx.cmdlineArgs.argv)
        throw error
      }
      if (invocation.command === 'sessions-list') return await listSessions(ctx, config, invocation, io)
      if (invocation.command === 'sessions-show') return await showSession(ctx, config, invocation, io)
      if (invocation.command === 'sessions-search') return await searchSessions(ctx, config, invocation, io)
      if (invocation.command === 'sessions-reindex') return await reindexSessions(ctx, invocation, io)
      if (invocation.command === 'grants-list') return await listGrants(ctx, invocation, io)
      if (invocation.command === 'grants-revoke') return await revokeGrant(ctx, invocation, io)
      if (invocation.command === 'usage') return await showUsage(ctx, invocation, io)
      if (invocation.command === 'mcp-list') return await listMcpServers(ctx, invocation, io)
      if (invocation.command === 'mcp-add') return await addMcpServer(ctx, invocation, io)
      if (invocation.command === 'mcp-remove') return await removeMcpServer(ctx, invocation, io)
      if (invocation.command === 'mcp-test') return await testMcpServer(ctx, invocation, io)
      if (invocation.command === 'sessions-diff') return await diffSession(ctx, invocation, io)
      if (invocation.command === 'rewind') return await rewindSession(ctx, invocation, io)
      if (invocation.command === 'sessions-rename') return await renameSession(ctx, invocation, io)
      if (invocation.command === 'sessions-archive') return await archiveSession(ctx, invocation, io)
      if (invocation.command === 'sessions-delete') return await deleteSession(ctx, invocation, io)
      if (invocation.command === 'sessions-export' || invocation.command === 'sessions-import')
        return await transferSessions(ctx, invocation, io)
      run = new HeadlessRun(ctx, config, invocation, io)
      json = invocation.json
      const code = await run.execute()
      if (json) writeResult(run, code, undefined)
      return code
    } catch (error) {
      // After SIGINT the tree is going away under the run: the interruption is the story, not the fallout.
      if (run?.interruption) {
        if (json)
          writeResult(run, run.interruption.code, {
            message: `interrupted by ${run.interruption.signal ?? 'a signal'}`,
          })
        return run.interruption.code
      }
      const code = exitCodeOf(error)
      const message = error instanceof Error ? error.message : String(error)
      io.stderr.write(
        `dsh: ${code === 1 && !(error instanceof RunFailure) && !(error instanceof SessionError) ? 'unexpected failure: ' : ''}${message}\n`,
      )
      const failure = { ...(codeOf(error) ? { code: codeOf(error) } : {}), message }
      if (json && run) writeResult(run, code, failure)
      else if (json) io.stdout.write(lineText(notStartedResult(code, failure, performance.now() - started)))
      return code
    }
  }

  /** The `--json` run's last line; prices come from `ctx.usagePrices` (shipped, overridden by the `usage.prices` setting). */
  function writeResult(run: HeadlessRun, code: number, error: { code?: string; message: string } | undefined): void {
    io.stdout.write(JSON.stringify(run.result(code, error, ctx.usagePrices.table())) + '\n')
  }
}

/** A typed error's code (`SessionError`, `LlmError`, …) for the result line. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' ? code : undefined
}

function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return 2
  if (error instanceof RunFailure) return error.exitCode
  if (error instanceof SessionError && USER_SESSION_ERRORS.has(error.code)) return 2
  return 1
}
