import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox'
import { filterDrivers, runGit } from '@dsh/git-kit'
import type { Config } from './config.ts'

export interface GitFacts {
  branch: string
  status: string
  commits: string[]
}

/** Wraps git confined read-only without network; undefined (git not run) when nothing can confine it. */
const confineReadOnly = (ctx: Context, cwd: string) => async (argv: string[]) => {
  const sandbox = ctx.get('sandbox')
  if (!sandbox) return undefined
  try {
    const confined = await sandbox.confine(argv, { cwd, authority: { mode: 'read-only', writableRoots: [] } })
    return confined.enforcement === 'full' ? confined.argv : undefined
  } catch {
    return undefined // no working backend: the facts leave git out rather than run it bare
  }
}

/**
 * One git command through @dsh/git-kit (scrubbed environment, no system or global config, every program a
 * repository's config could make git run switched off, each filter driver it defines among them), confined
 * read-only without network besides; undefined when it fails or cannot be confined.
 */
async function git(
  ctx: Context,
  cwd: string,
  args: string[],
  config: Config,
  drivers: readonly string[] = [],
): Promise<string | undefined> {
  try {
    return (
      await runGit(args, {
        cwd,
        timeoutMs: config.gitTimeoutMs,
        confine: confineReadOnly(ctx, cwd),
        maxBytes: 64_000,
        filterDrivers: drivers,
      })
    ).toString('utf8')
  } catch {
    return undefined
  }
}

/** `2 modified, 1 added, 3 untracked: a.ts, b.ts, …` from `git status --porcelain` lines. */
function summarize(porcelain: string, maxFiles: number): string {
  const lines = porcelain.split('\n').filter(Boolean)
  if (!lines.length) return 'clean'
  const counts = new Map<string, number>()
  const kind = (code: string) =>
    code === '??'
      ? 'untracked'
      : code.includes('A')
        ? 'added'
        : code.includes('D')
          ? 'deleted'
          : code.includes('R')
            ? 'renamed'
            : 'modified'
  for (const line of lines) counts.set(kind(line.slice(0, 2)), (counts.get(kind(line.slice(0, 2))) ?? 0) + 1)
  const files = lines.slice(0, maxFiles).map((line) => line.slice(3))
  const more = lines.length > maxFiles ? `, and ${lines.length - maxFiles} more` : ''
  return `${[...counts].map(([name, count]) => `${count} ${name}`).join(', ')}: ${files.join(', ')}${more}`
}

/** The branch checked out in the repository at `cwd`, or undefined outside one (one confined git). */
export async function gitBranch(ctx: Context, cwd: string, config: Config): Promise<string | undefined> {
  return (await git(ctx, cwd, ['rev-parse', '--abbrev-ref', 'HEAD'], config))?.trim() || undefined
}

/** The branch, status summary and recent commits of the repository at `cwd`, or undefined outside one. */
export async function gitFacts(
  ctx: Context,
  cwd: string,
  config: Config,
  knownBranch?: string,
): Promise<GitFacts | undefined> {
  const branch = knownBranch ?? (await gitBranch(ctx, cwd, config))
  if (!branch) return undefined
  // `status` may compare contents (through a filter): each filter driver the repository defines is switched off.
  const filters = await filterDrivers({
    cwd,
    timeoutMs: config.gitTimeoutMs,
    confine: confineReadOnly(ctx, cwd),
  }).catch(() => undefined)
  const status = filters
    ? await git(ctx, cwd, ['status', '--porcelain', '--untracked-files=normal'], config, filters)
    : undefined
  const log = config.commits
    ? await git(ctx, cwd, ['log', '--oneline', '--no-decorate', `-n${config.commits}`], config)
    : ''
  return {
    branch,
    status: status === undefined ? 'unknown' : summarize(status, config.statusFiles),
    commits: (log ?? '')
      .split('\n')
      .filter(Boolean)
      .map((line) => (line.length > config.maxCommandChars ? `${line.slice(0, config.maxCommandChars)}…` : line)),
  }
}
