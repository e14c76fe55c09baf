import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import { defineTool, ToolError, Type, type Static, type ToolDefinition } from '@dsh/tools'
import { join } from 'node:path'
import { capped, cutLine, searchBase, type SearchBase } from './base.ts'
import type { Config } from './config.ts'
import { globMatcher, listFiles, searchFile, type LineMatch } from './fallback.ts'
import { BASE_FLAGS, confinedRipgrep, findRipgrep, runRipgrep } from './ripgrep.ts'

const GREP_MODES = ['files_with_matches', 'content', 'count'] as const

export type GrepMode = (typeof GREP_MODES)[number]

const grepArguments = Type.Object(
  {
    pattern: Type.String({ description: 'Regular expression (ripgrep / Rust syntax).' }),
    path: Type.Optional(Type.String({ description: 'File or directory to search (default: the workspace).' })),
    glob: Type.Optional(Type.String({ description: 'Only files matching this glob (e.g. "*.ts").' })),
    // A plain string enum (what models read best), not TypeBox's union of literals.
    output_mode: Type.Optional(Type.Unsafe<GrepMode>({ type: 'string', enum: [...GREP_MODES], description: 'files_with_matches (default), content (lines), or count (per file).' })),
    ignore_case: Type.Optional(Type.Boolean({ description: 'Case-insensitive search.' })),
    context: Type.Optional(Type.Integer({ minimum: 0, description: 'Lines of context around each match (content mode).' })),
  },
  { additionalProperties: false },
)

export type GrepArgs = Static<typeof grepArguments>

function ripgrepArgs(args: GrepArgs, base: SearchBase): string[] {
  const flags = [...BASE_FLAGS]
  if (args.ignore_case) flags.push('--ignore-case')
  if (args.glob) flags.push('--glob', args.glob)
  const mode = args.output_mode ?? 'files_with_matches'
  if (mode === 'files_with_matches') flags.push('--files-with-matches')
  else if (mode === 'count') flags.push('--count', '--with-filename')
  else flags.push('--line-number', '--no-heading', '--with-filename', ...(args.context ? ['--context', String(args.context)] : []))
  return [...flags, '--regexp', args.pattern, '--', base.file ? `./${base.file}` : '.']
}

/** The built-in search, printing what ripgrep prints for the same mode. */
async function fallback(ctx: Context, args: GrepArgs, base: SearchBase, config: Config, signal: AbortSignal): Promise<string[]> {
  let regex: RegExp
  try {
    regex = new RegExp(args.pattern, args.ignore_case ? 'i' : '')
  } catch (error) {
    throw new ToolError('SEARCH_FAILED', `The pattern is not a valid regular expression: ${(error as Error).message}`)
  }
  const matchesGlob = args.glob ? globMatcher(args.glob) : () => true
  const files = base.file ? [base.file] : (await listFiles(ctx, base, config, signal)).filter(matchesGlob)
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
    for (const line of match.matches) for (let at = Math.max(1, line - around); at <= Math.min(match.lines.length, line + around); at++) shown.add(at)
    const isMatch = new Set(match.matches)
    for (const line of [...shown].sort((a, b) => a - b)) {
      if (around && last && (last.file !== match.file || line > last.line + 1)) out.push('--')
      out.push(`${match.file}${isMatch.has(line) ? ':' : '-'}${line}${isMatch.has(line) ? ':' : '-'}${match.lines[line - 1]!.replace(/\r$/, '')}`)
      last = { file: match.file, line }
    }
  }
  return out
}

/** `grep`: a regular expression searched in file contents (ripgrep syntax when rg is present). */
export function grepTool(ctx: Context, config: Config): ToolDefinition<GrepArgs> {
  return defineTool({
    name: 'grep',
    description: `Search file contents for a regular expression. Returns matching files (default), matching lines with line numbers (output_mode "content"), or counts. Hidden, ignored and binary files are skipped; at most ${config.maxResults} files or ${config.maxMatchLines} lines.`,
    parameters: grepArguments,
    concurrencySafe: true,
    summarize: (args) => `grep ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
    async execute(args, context) {
      const base = await searchBase(ctx, context.cwd, args.path, true, await ctx.sandboxPolicy.authority(context.session))
      const rg = findRipgrep(config.ripgrep)
      const argv = rg ? await confinedRipgrep(ctx, [rg, ...ripgrepArgs(args, base)], base.dir, base.authority) : undefined
      let lines: string[]
      let cut = false
      if (argv) ({ lines, cut } = await runRipgrep(ctx, argv, base.dir, config, context.signal))
      else lines = await fallback(ctx, args, base, config, context.signal)
      const mode = args.output_mode ?? 'files_with_matches'
      if (!lines.length) return `No matches for /${args.pattern}/ in ${base.file ? base.prefix + base.file : base.prefix || './'}.`
      const shown = lines.map((line) => (line === '--' ? line : cutLine(base.prefix + line, config.maxLineChars)))
      const note = cut ? '[The results were cut: too much output. Narrow the pattern, the path or the glob.]' : undefined
      return mode === 'content' ? capped(shown, config.maxMatchLines, 'lines', note).join('\n') : capped(shown, config.maxResults, 'files', note).join('\n')
    },
  })
}
