import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type {} from '@dsh/sandbox-policy'
import { defineTool, Type, type Static, type ToolDefinition } from '@dsh/tools'
import type { Config } from './config.ts'
import { numbered, splitLines } from '@dsh/tool-kit'
import { absolute, asToolError, display } from './paths.ts'
import { binary } from './binary.ts'

function readArguments(config: Config) {
  return Type.Object(
    {
      path: Type.String({ description: 'File to read (relative to the workspace, or absolute).' }),
      offset: Type.Optional(Type.Integer({ minimum: 1, description: 'First line to read, 1-based (default 1).' })),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, description: `How many lines to read (default ${config.readLines}).` }),
      ),
    },
    { additionalProperties: false },
  )
}

export type ReadArgs = Static<ReturnType<typeof readArguments>>

/** `read`: numbered lines of a text file, a range at a time; a binary file is described, not shown. */
export function readTool(ctx: Context, config: Config): ToolDefinition<ReadArgs> {
  return defineTool({
    name: 'read',
    description: [
      `Read a file. Text comes back as numbered lines ("   12\tcode"; the number and tab are not part of the file), up to ${config.readLines} lines unless you pass limit; use offset and limit for a range of a long file (grep first to find the line).`,
      'An image (PNG, JPEG, GIF, WebP) is shown to you when the model accepts images; a PDF or other binary file is described, not shown.',
      "Use it instead of cat, head or sed through the shell. Read several files in one response when you need them all. Secret paths (keys, credentials, dsh's own home) are never read.",
    ].join('\n'),
    parameters: readArguments(config),
    concurrencySafe: true,
    summarize: (args) => `read ${args.path}`,
    async execute(args, context) {
      const file = absolute(context.cwd, args.path)
      const shown = display(context.cwd, file)
      const startLine = args.offset ?? 1
      let result
      try {
        const authority = await ctx.sandboxPolicy.authority(context.session)
        result = await ctx.fs.readText(file, {
          startLine,
          maxLines: args.limit ?? config.readLines,
          maxBytes: config.readMaxBytes,
          authority,
        })
      } catch (error) {
        if (error instanceof FsError && error.code === 'FS_BINARY')
          return await binary(ctx, config, file, shown, await ctx.sandboxPolicy.authority(context.session))
        throw asToolError(error, {
          FS_IS_DIRECTORY: 'List it with glob instead',
          FS_NOT_FOUND: 'Find the right path with glob',
        })
      }
      const { totalLines, endLine } = result
      if (totalLines === 0) return `"${shown}" is empty.`
      if (startLine > totalLines) return `"${shown}" has ${totalLines} lines; offset ${startLine} is past its end.`
      const lines = splitLines(result.text)
      const notes: string[] = []
      // Only a line cut by the byte cap lacks its line end (a whole line keeps it, and a last line is never cut short).
      const cutLine = result.truncated && endLine === startLine && !result.text.endsWith('\n')
      if (cutLine)
        notes.push(
          `[Line ${endLine} is longer than the ${config.readMaxBytes}-byte limit of one read: only its beginning is shown. Search it with grep.]`,
        )
      else if (result.truncated)
        notes.push(
          `[Stopped after line ${endLine} of ${totalLines}: one read returns at most ${config.readMaxBytes} bytes. Continue with offset=${endLine + 1}.]`,
        )
      else if (endLine < totalLines)
        notes.push(`[Showing lines ${startLine}–${endLine} of ${totalLines}. Continue with offset=${endLine + 1}.]`)
      return [numbered(lines, startLine, config.maxLineChars), ...notes].join('\n')
    },
  })
}
