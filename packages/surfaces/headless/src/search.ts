import { resolve } from 'node:path'
import { UsageError } from '@dsh/cmdline'
import type { Context } from '@dsh/cordis'
import type { SearchHit, SessionQuery } from '@dsh/session-query'
import type { Config } from './config.ts'
import type { ReindexInvocation, SearchInvocation } from './search-options.ts'
import type { RunIO } from './run.ts'
import { localTime, oneLine, printable } from './text.ts'

/**
 * `dsh sessions search "query"`: sessions of this directory (or every one) whose messages, tool calls or
 * tool output contain the words, best first; `--json` prints one `SearchHit` per line (the SDK's shape).
 */
export async function searchSessions(
  ctx: Context,
  config: Config,
  invocation: SearchInvocation,
  io: RunIO,
): Promise<number> {
  const cwd = invocation.allWorkspaces ? undefined : resolve(ctx.app.cwd, invocation.cwd ?? '.')
  const hits = await sessionQuery(ctx).search(invocation.query, {
    limit: invocation.limit ?? config.searchLimit,
    ...(cwd !== undefined ? { cwd } : {}),
  })
  for (const hit of hits) {
    if (invocation.json) io.stdout.write(JSON.stringify(hit) + '\n')
    else
      io.stdout.write(
        hitLines(hit, config, invocation.allWorkspaces, !!(io.stdout as { isTTY?: boolean }).isTTY).join('\n') + '\n',
      )
  }
  if (!hits.length && !invocation.json)
    io.stderr.write(
      `dsh: no session matches "${invocation.query}"${cwd ? ` in ${cwd} (--all-workspaces looks everywhere)` : ''}\n`,
    )
  return 0
}

/** `dsh sessions reindex`: the index thrown away and built again from the logs. */
export async function reindexSessions(ctx: Context, invocation: ReindexInvocation, io: RunIO): Promise<number> {
  const report = await sessionQuery(ctx).reindex()
  if (invocation.json) io.stdout.write(JSON.stringify(report) + '\n')
  else io.stdout.write(`indexed ${report.indexed} sessions (${report.events} events)\n`)
  return 0
}

/** Search is optional in a composition: without its row the commands say so instead of failing to mount. */
function sessionQuery(ctx: Context): SessionQuery {
  const service = ctx.get('sessionQuery') as SessionQuery | undefined
  if (!service)
    throw new UsageError(
      'session search is not mounted in this profile (no ctx.sessionQuery: the session-query row is disabled or missing)',
    )
  return service
}

/** Two lines per hit: the session as `sessions list` names it, then where the words are, marked. */
function hitLines(hit: SearchHit, config: Config, withCwd: boolean, tty: boolean): string[] {
  const name = oneLine(hit.title ?? hit.firstPrompt ?? '(no prompt)', config.titleChars)
  const [open, close] = tty ? ['\x1b[1m', '\x1b[22m'] : ['«', '»']
  // The snippet is a log's text (a model's words, a command's output): shown as text, our marks added after.
  const shown = (from: number, to?: number) => printable(hit.snippet.text.slice(from, to))
  let snippet = ''
  let at = 0
  for (const { start, end } of hit.snippet.highlights) {
    snippet += shown(at, start) + open + shown(start, end) + close
    at = end
  }
  snippet += shown(at)
  return [
    `${hit.sessionId}  ${localTime(hit.time)}  ${name}${withCwd ? `  ${hit.cwd}` : ''}`,
    `    #${hit.seq} ${hit.source}${hit.matches > 1 ? ` (+${hit.matches - 1} more)` : ''}: ${snippet}`,
  ]
}
