import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import { defineTool, Type, type Static, type ToolDefinition } from '@dsh/tools'
import { capped, cutLine, searchBase } from './base.ts'
import type { Config } from './config.ts'
import { globMatcher, listFiles } from './fallback.ts'
import { BASE_FLAGS, confinedRipgrep, findRipgrep, runRipgrep } from './ripgrep.ts'

const globArguments = Type.Object(
  {
    pattern: Type.String({ description: 'Glob pattern, relative to path.' }),
    path: Type.Optional(Type.String({ description: 'Directory to search (default: the workspace).' })),
  },
  { additionalProperties: false },
)

export type GlobArgs = Static<typeof globArguments>

/** `glob`: files whose path (relative to the searched directory) matches a glob pattern. */
export function globTool(ctx: Context, config: Config): ToolDefinition<GlobArgs> {
  return defineTool({
    name: 'glob',
    description: `Find files by glob pattern (e.g. "**/*.ts", "src/**/test_*.py"; a pattern without "/" matches file names at any depth). Hidden and ignored files are skipped. Returns paths sorted, at most ${config.maxResults}.`,
    parameters: globArguments,
    concurrencySafe: true,
    summarize: (args) => `glob ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
    async execute(args, context) {
      const base = await searchBase(ctx, context.cwd, args.path, false, await ctx.sandboxPolicy.authority(context.session))
      const rg = findRipgrep(config.ripgrep)
      const argv = rg ? await confinedRipgrep(ctx, [rg, ...BASE_FLAGS, '--files', '--glob', args.pattern, '.'], base.dir, base.authority) : undefined
      let files: string[]
      let cut = false
      if (argv) ({ lines: files, cut } = await runRipgrep(ctx, argv, base.dir, config, context.signal))
      else files = (await listFiles(ctx, base, config, context.signal)).filter(globMatcher(args.pattern))
      if (!files.length) return `No files match "${args.pattern}" in ${base.prefix || './'}.`
      const shown = files.sort().map((file) => cutLine(base.prefix + file, config.maxLineChars))
      return capped(shown, config.maxResults, 'files', cut ? '[The listing was cut: too many files. Narrow the pattern or the path.]' : undefined).join('\n')
    },
  })
}
