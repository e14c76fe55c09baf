import type { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import picomatch from 'picomatch'
import type { SearchBase } from './base.ts'
import type { Config } from './config.ts'

/**
 * A glob matcher with ripgrep's reading: a pattern without `/` matches a file name at any depth. `*` matches
 * a dot file only with `dot` (include_ignored): hidden files are already left out of what it is given.
 */
export function globMatcher(pattern: string, dot = false): (relativePath: string) => boolean {
  const matches = picomatch(pattern, { basename: !pattern.includes('/'), dot })
  return (relativePath) => matches(relativePath) // one argument: a second one makes picomatch return an object
}

/**
 * The files under `dir` (paths relative to it, sorted), skipping hidden entries and the configured
 * directories (with `includeIgnored`, only `.git`), as the built-in stand-in for `rg --files`. It does not
 * read .gitignore files.
 */
export async function listFiles(
  ctx: Context,
  base: SearchBase,
  config: Config,
  signal: AbortSignal,
  includeIgnored = false,
): Promise<string[]> {
  const files: string[] = []
  const skip = (entry: { name: string; type: string }) =>
    entry.type === 'directory' && entry.name === '.git'
      ? true
      : !includeIgnored &&
        (entry.name.startsWith('.') || (entry.type === 'directory' && config.fallbackSkip.includes(entry.name)))
  for await (const entry of ctx.fs.walk(base.dir, { skip, authority: base.authority })) {
    if (signal.aborted) break
    if (entry.type === 'file') files.push(entry.relativePath)
  }
  return files.sort()
}

export interface LineMatch {
  file: string
  /** 1-based line numbers of matching lines. */
  matches: number[]
  lines: string[]
}

/** Searches one text file line by line; undefined for a binary, unreadable or too large file (ripgrep skips binaries too). */
export async function searchFile(
  ctx: Context,
  file: string,
  relativePath: string,
  regex: RegExp,
  config: Config,
  authority: SandboxAuthority,
): Promise<LineMatch | undefined> {
  try {
    const stat = await ctx.fs.stat(file)
    // A link to a secret file is refused by the read fence here (FS_READ_DENIED) and so skipped.
    if (stat.type !== 'file' || stat.size > config.fallbackMaxFileBytes || (await ctx.fs.isBinary(file, { authority })))
      return undefined
    const text = new TextDecoder('utf-8', { fatal: true }).decode(await ctx.fs.readBytes(file, { authority }))
    const lines = text.split('\n')
    if (lines.at(-1) === '') lines.pop()
    const matches: number[] = []
    lines.forEach((line, index) => regex.test(line) && matches.push(index + 1))
    return matches.length ? { file: relativePath, matches, lines } : undefined
  } catch {
    return undefined
  }
}
