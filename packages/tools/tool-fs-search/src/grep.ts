import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import { defineTool, ToolError, Type, type Static, type ToolDefinition } from '@dsh/tools'
import { join } from 'node:path'
import { capped, cutLine, newestFirst, searchBase, type SearchBase } from './base.ts'
import type { Config } from './config.ts'
import { globMatcher, listFiles, searchFile, type LineMatch } from './fallback.ts'
import { BASE_FLAGS, confinedRipgrep, findRipgrep, ignoreFlags, runRipgrep } from './ripgrep.ts'

const GREP_MODES = ['files_with_matches', 'content', 'count'] as const

export type GrepMode = (typeof GREP_MODES)[number]

const grepArguments = Type.Object(
  {
    pattern: Type.String({
      description:
        'Regular expression (ripgrep / Rust syntax: escape literal braces and parentheses, e.g. "fn main\\(").',
    }),
    path: Type.Optional(Type.String({ description: 'File or directory to search (default: the workspace).' })),
    glob: Type.Optional(Type.String({ description: 'Only files matching this glob (e.g. "*.ts").' })),
    // A plain string enum (what models read best), not TypeBox's union of literals.
    output_mode: Type.Optional(
      Type.Unsafe<GrepMode>({
        type: 'string',
        enum: [...GREP_MODES],
        description: 'files_with_matches (default), content (lines), or count (per file).',
      }),
    ),
    ignore_case: Type.Optional(Type.Boolean({ description: 'Case-insensitive search.' })),
    context: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Lines of context around each match (content mode).' }),
    ),
    include_ignored: Type.Optional(
      Type.Boolean({
        description:
          'Also search hidden files and files ignored by .gitignore / .ignore (never .git itself). Default false.',
      }),
    ),
  },
  { additionalProperties: false },
)

export type GrepArgs = Static<typeof grepArguments>

// `glob` is not passed to ripgrep (a positive --glob overrides the ignore rules, see BASE_FLAGS): counts and
// lines carry their path before a NUL byte (--null), so each line is kept or dropped by its file here.
function ripgrepArgs(args: GrepArgs, base: SearchBase): string[] {
  const flags = [...BASE_FLAGS, ...ignoreFlags(args.include_ignored)]
  if (args.ignore_case) flags.push('--ignore-case')
  const mode = args.output_mode ?? 'files_with_matches'
  if (mode === 'files_with_matches') flags.push('--files-with-matches')
  else if (mode === 'count') flags.push('--count', '--with-filename', '--null')
  else
    flags.push(
      '--line-number',
      '--no-heading',
      '--with-filename',
      '--null',
      ...(args.context ? ['--context', String(args.context)] : []),
    )
  return [...flags, '--regexp', args.pattern, '--', base.file ? `./${base.file}` : '.']
}

/** ripgrep's `path NUL rest` lines back to `path:count`, `path:line:text` / `path-line-text`, keeping only files the glob matches. */
function keepMatching(lines: string[], args: GrepArgs): string[] {
  const matches = args.glob ? globMatcher(args.glob, args.include_ignored) : () => true
  const mode = args.output_mode ?? 'files_with_matches'
  if (mode === 'files_with_matches') return lines.filter(matches)
  const out: string[] = []
  for (const line of lines) {
    const cut = line.indexOf('\0')
    if (cut === -1) {
      if (line === '--' && out.length && out.at(-1) !== '--') out.push(line)
      continue
    }
    const file = line.slice(0, cut).replace(/^\.\//, '')
    if (!matches(file)) continue
    const rest = line.slice(cut + 1)
    out.push(mode === 'count' ? `${file}:${rest}` : `${file}${/^\d+-/.test(rest) ? '-' : ':'}${rest}`)
  }
  while (out.at(-1) === '--') out.pop()
  return out
}

/** The built-in search, printing what ripgrep prints for the same mode. */
async function fallback(
  ctx: Context,
  args: GrepArgs,
  base: SearchBase,
  config: Config,
  signal: AbortSignal,
): Promise<string[]> {
  let regex: RegExp
  try {
    regex = new RegExp(args.pattern, args.ignore_case ? 'i' : '')
  } catch (error) {
    throw new ToolError('SEARCH_FAILED', `The pattern is not a valid regular expression: ${(error as Error).message}`)
  }
  const matchesGlob = args.glob ? globMatcher(args.glob, args.include_ignored) : () => true
  const files = base.file
    ? [base.file]
    : (await listFiles(ctx, base, config, signal, args.include_ignored)).filter(matchesGlob)
  const found: LineMatch[] = []
  for (const file of files) {
    if (signal.aborted) break
    const match = await searchFile(ctx, join(base.dir, file), file, regex, config, base.authority)
    if (match) found.push(match)
  }
  const mode = args.output_mode ?? 'files_with_matches'
  if (mode === 'files_with_matches') return found.map((match) => match.file)
  if (mode === 'count') return found.map((match) => `${match.file}:${match.matches.length}`)
  const out: string[] = []
  const around = args.context ?? 0
  let last: { file: string; line: number } | undefined
  for (const match of found) {
    const shown = new Set<number>()
    for (const line of match.matches)
      for (let at = Math.max(1, line - around); at <= Math.min(match.lines.length, line + around); at++) shown.add(at)
    const isMatch = new Set(match.matches)
    for (const line of [...shown].sort((a, b) => a - b)) {
      if (around && last && (last.file !== match.file || line > last.line + 1)) out.push('--')
      out.push(
        `${match.file}${isMatch.has(line) ? ':' : '-'}${line}${isMatch.has(line) ? ':' : '-'}${match.lines[line - 1]!.replace(/\r$/, '')}`,
      )
      last = { file: match.file, line }
    }
  }
  return out
}

/** Listed files (or `path:count` lines) newest first. */
async function newestFirstLines(ctx: Context, dir: string, lines: string[], mode: GrepMode): Promise<string[]> {
  if (mode === 'files_with_matches') return newestFirst(ctx, dir, lines)
  const byFile = new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(':')), line]))
  return (await newestFirst(ctx, dir, [...byFile.keys()])).map((file) => byFile.get(file)!)
}

/** `grep`: a regular expression searched in file contents (ripgrep syntax when rg is present). */
export function grepTool(ctx: Context, config: Config): ToolDefinition<GrepArgs> {
  return defineTool({
    name: 'grep',
    description: [
      `Search file contents for a regular expression (ripgrep). Returns the matching files, most recently modified first (default); matching lines as path:line:text (output_mode "content", with context lines around them); or a count per file. At most ${config.maxResults} files or ${config.maxMatchLines} lines (a note says how many more).`,
      'Use it to find where something is defined or used: grep "class Session" then read the file at that line; narrow with glob ("*.ts") or path. Hidden files, .git, ignored (.gitignore / .ignore) and binary files are skipped unless include_ignored is true.',
      'Not for listing files by name: use glob. Prefer it to running grep or rg through bash.',
    ].join('\n'),
    parameters: grepArguments,
    concurrencySafe: true,
    summarize: (args) => `grep ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
    async execute(args, context) {
      const base = await searchBase(
        ctx,
        context.cwd,
        args.path,
        true,
        await ctx.sandboxPolicy.authority(context.session),
      )
      const rg = findRipgrep(config.ripgrep)
      const argv = rg
        ? await confinedRipgrep(ctx, [rg, ...ripgrepArgs(args, base)], base.dir, base.authority)
        : undefined
      let lines: string[]
      let cut = false
      if (argv) ({ lines, cut } = await runRipgrep(ctx, argv, base.dir, config, context.signal))
      else lines = await fallback(ctx, args, base, config, context.signal)
      const mode = args.output_mode ?? 'files_with_matches'
      if (argv) lines = keepMatching(lines, args)
      if (mode !== 'content') lines = await newestFirstLines(ctx, base.dir, lines, mode)
      if (!lines.length)
        return `No matches for /${args.pattern}/ in ${base.file ? base.prefix + base.file : base.prefix || './'}.`
      const shown = lines.map((line) => (line === '--' ? line : cutLine(base.prefix + line, config.maxLineChars)))
      const note = cut
        ? '[The results were cut: too much output. Narrow the pattern, the path or the glob.]'
        : undefined
      return mode === 'content'
        ? capped(shown, config.maxMatchLines, 'lines', note).join('\n')
        : capped(shown, config.maxResults, 'files', note).join('\n')
    },
  })
}
