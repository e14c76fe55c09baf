import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import type { Context } from '@dsh/cordis'
import { SandboxError, type SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/subprocess'
import { ToolError } from '@dsh/tools'
import type { Config } from './config.ts'

/** The ripgrep to run: an absolute configured path as is, else the first executable of that name on PATH. */
export function findRipgrep(setting: string, path = process.env.PATH): string | undefined {
  if (!setting) return undefined
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK)
      return statSync(file).isFile()
    } catch {
      return false
    }
  }
  if (isAbsolute(setting)) return executable(setting) ? setting : undefined
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir && isAbsolute(dir) && executable(join(dir, setting))) return join(dir, setting)
  }
  return undefined
}

/**
 * Flags every run shares: no user config file, no colours, no per-file error chatter, a stable order, and
 * .gitignore read even where no `.git` is (a copied or unpacked tree). Never `--glob` with a positive
 * pattern: ripgrep lets such a glob override every ignore rule ("**" then "/*" would list `.git/` and
 * ignored files), so patterns are matched on what ripgrep lists (see glob.ts, grep.ts).
 */
export const BASE_FLAGS = ['--no-config', '--color', 'never', '--no-messages', '--sort', 'path', '--no-require-git']

/** `include_ignored`: hidden and ignored files too, but never what is inside `.git`. */
export const ignoreFlags = (includeIgnored: boolean | undefined) =>
  includeIgnored ? ['--hidden', '--no-ignore', '--glob', '!.git'] : []

/**
 * The ripgrep argv confined read-only with the session's path rules (secret folders are empty inside), or
 * undefined when nothing can confine it here: the caller then searches with the built-in search, which the
 * fs read fence covers. ripgrep is never run bare over the whole disk.
 */
export async function confinedRipgrep(
  ctx: Context,
  argv: string[],
  cwd: string,
  authority: SandboxAuthority,
): Promise<string[] | undefined> {
  const sandbox = ctx.get('sandbox')
  if (!sandbox) return undefined
  try {
    const confined = await sandbox.confine(argv, {
      cwd,
      authority: { mode: 'read-only', writableRoots: [], ...(authority.paths ? { paths: authority.paths } : {}) },
    })
    return confined.enforcement === 'full' ? confined.argv : undefined
  } catch (error) {
    if (error instanceof SandboxError) return undefined
    throw error
  }
}

/**
 * Runs ripgrep in `cwd` through ctx.subprocess and returns its lines (paths printed relative to `cwd`, the
 * leading `./` dropped), with whether the output cap cut some. Exit status 1 (nothing found) is an empty
 * result; 2 is an error naming what ripgrep said (a bad pattern).
 */
export async function runRipgrep(
  ctx: Context,
  argv: string[],
  cwd: string,
  config: Config,
  signal: AbortSignal,
): Promise<{ lines: string[]; cut: boolean }> {
  const result = await ctx.subprocess.run(argv, {
    cwd,
    timeoutMs: config.timeoutMs,
    outputCapBytes: config.outputCapBytes,
    signal,
  })
  if (result.timedOut)
    throw new ToolError(
      'SEARCH_TIMEOUT',
      `The search did not finish within ${config.timeoutMs} ms and was stopped. Narrow the path or the pattern.`,
    )
  if (result.exitCode === 2)
    throw new ToolError('SEARCH_FAILED', `ripgrep refused the search: ${result.output.trim().slice(0, 2000)}`)
  if (result.exitCode !== 0 && result.exitCode !== 1)
    throw new ToolError(
      'SEARCH_FAILED',
      `ripgrep ended with ${result.signal ?? `status ${result.exitCode}`}: ${result.output.trim().slice(0, 2000)}`,
    )
  const lines: string[] = []
  for (const line of result.output.split('\n')) {
    // The cap keeps a head and a tail around a "[… N bytes cut …]" line: keep the head, in order.
    if (result.truncated && /^\[… \d+ bytes cut …\]$/.test(line)) return { lines: lines.slice(0, -1), cut: true } // its last line may be partial
    if (line) lines.push(line.startsWith('./') ? line.slice(2) : line)
  }
  return { lines, cut: false }
}
