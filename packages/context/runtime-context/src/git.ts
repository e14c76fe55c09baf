import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox'
import type {} from '@dsh/subprocess'
import type { Config } from './config.ts'

/**
 * Options that keep a hostile repository's configuration from running anything while dsh reads it:
 * `core.fsmonitor` (a program git runs on status), hooks, pagers and external diff drivers. Git still reads
 * the repository's config otherwise, so it also runs confined read-only, without network.
 */
const SAFE = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'core.pager=cat', '-c', 'diff.external=', '-c', 'color.ui=never', '--no-optional-locks']

export interface GitFacts {
  branch: string
  status: string
  commits: string[]
}

/** One git command, confined read-only; undefined when it fails or nothing can confine it. */
async function git(ctx: Context, cwd: string, args: string[], config: Config): Promise<string | undefined> {
  const sandbox = ctx.get('sandbox')
  if (!sandbox) return undefined
  let argv: string[]
  try {
    const confined = await sandbox.confine(['git', ...SAFE, ...args], { cwd, authority: { mode: 'read-only', writableRoots: [] } })
    if (confined.enforcement !== 'full') return undefined
    argv = confined.argv
  } catch {
    return undefined // no working backend: the facts leave git out rather than run it bare
  }
  const result = await ctx.subprocess.run(argv, { cwd, timeoutMs: config.gitTimeoutMs, outputCapBytes: 64_000 }).catch(() => undefined)
  return result && result.exitCode === 0 && !result.timedOut ? result.output : undefined
}

/** `2 modified, 1 added, 3 untracked: a.ts, b.ts, …` from `git status --porcelain` lines. */
function summarize(porcelain: string, maxFiles: number): string {
  const lines = porcelain.split('\n').filter(Boolean)
  if (!lines.length) return 'clean'
  const counts = new Map<string, number>()
  const kind = (code: string) => (code === '??' ? 'untracked' : code.includes('A') ? 'added' : code.includes('D') ? 'deleted' : code.includes('R') ? 'renamed' : 'modified')
  for (const line of lines) counts.set(kind(line.slice(0, 2)), (counts.get(kind(line.slice(0, 2))) ?? 0) + 1)
  const files = lines.slice(0, maxFiles).map((line) => line.slice(3))
  const more = lines.length > maxFiles ? `, and ${lines.length - maxFiles} more` : ''
  return `${[...counts].map(([name, count]) => `${count} ${name}`).join(', ')}: ${files.join(', ')}${more}`
}

/** The branch, status summary and recent commits of the repository at `cwd`, or undefined outside one. */
export async function gitFacts(ctx: Context, cwd: string, config: Config): Promise<GitFacts | undefined> {
  const branch = (await git(ctx, cwd, ['rev-parse', '--abbrev-ref', 'HEAD'], config))?.trim()
  if (!branch) return undefined
  const status = await git(ctx, cwd, ['status', '--porcelain', '--untracked-files=normal'], config)
  const log = config.commits ? await git(ctx, cwd, ['log', '--oneline', '--no-decorate', `-n${config.commits}`], config) : ''
  return {
    branch,
    status: status === undefined ? 'unknown' : summarize(status, config.statusFiles),
    commits: (log ?? '')
      .split('\n')
      .filter(Boolean)
      .map((line) => (line.length > config.maxCommandChars ? `${line.slice(0, config.maxCommandChars)}…` : line)),
  }
}
