import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import { defineTool, Type, type Static, type ToolDefinition } from '@dsh/tools'
import { capped, cutLine, newestFirst, searchBase } from './base.ts'
import type { Config } from './config.ts'
import { globMatcher, listFiles } from './fallback.ts'
import { BASE_FLAGS, confinedRipgrep, findRipgrep, ignoreFlags, runRipgrep } from './ripgrep.ts'

const globArguments = Type.Object(
  {
    pattern: Type.String({
      description:
        'Glob pattern, relative to path ("**/*.ts", "src/**/test_*.py"; without "/" it matches file names at any depth).',
    }),
    path: Type.Optional(Type.String({ description: 'Directory to search (default: the workspace).' })),
    include_ignored: Type.Optional(
      Type.Boolean({
        description:
          'Also list hidden files and files ignored by .gitignore / .ignore (never .git itself). Default false.',
      }),
    ),
  },
  { additionalProperties: false },
)

export type GlobArgs = Static<typeof globArguments>

/** `glob`: files whose path (relative to the searched directory) matches a glob pattern, newest first. */
export function globTool(ctx: Context, config: Config): ToolDefinition<GlobArgs> {
  return defineTool({
    name: 'glob',
    description: [
      `Find files by name or path pattern. Returns paths, most recently modified first, at most ${config.maxResults} (a note says how many more).`,
      'Use it to locate files ("**/*.test.ts", "src/**/config*", "Makefile"). Hidden files, .git and files ignored by .gitignore / .ignore are left out unless include_ignored is true.',
      'Not for searching inside files: use grep. Not for reading a file: use read.',
    ].join('\n'),
    parameters: globArguments,
    concurrencySafe: true,
    summarize: (args) => `glob ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
    async execute(args, context) {
      const base = await searchBase(
        ctx,
        context.cwd,
        args.path,
        false,
        await ctx.sandboxPolicy.authority(context.session),
      )
      const rg = findRipgrep(config.ripgrep)
      // ripgrep lists what its ignore rules keep; the pattern is matched here (see BASE_FLAGS).
      const argv = rg
        ? await confinedRipgrep(
            ctx,
            [rg, ...BASE_FLAGS, ...ignoreFlags(args.include_ignored), '--files', '.'],
            base.dir,
            base.authority,
          )
        : undefined
      let files: string[]
      let cut = false
      if (argv) ({ lines: files, cut } = await runRipgrep(ctx, argv, base.dir, config, context.signal))
      else files = await listFiles(ctx, base, config, context.signal, args.include_ignored)
      files = files.filter(globMatcher(args.pattern, args.include_ignored))
      if (!files.length)
        return `No files match "${args.pattern}" in ${base.prefix || './'}${args.include_ignored ? '' : ' (hidden and ignored files left out: include_ignored lists them)'}.`
      const shown = (await newestFirst(ctx, base.dir, files)).map((file) =>
        cutLine(base.prefix + file, config.maxLineChars),
      )
      return capped(
        shown,
        config.maxResults,
        'files',
        cut ? '[The listing was cut: too many files. Narrow the pattern or the path.]' : undefined,
      ).join('\n')
    },
  })
}
