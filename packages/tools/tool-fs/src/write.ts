import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import { defineTool, Type, type Static, type ToolDefinition } from '@dsh/tools'
import { diagnosticsNote, diagnosticsOptions, splitLines, writeApprovalReason, writeAuthority } from '@dsh/tool-kit'
import type { Config } from './config.ts'
import { absolute, asToolError, display } from './paths.ts'

const writeArguments = Type.Object(
  {
    path: Type.String({ description: 'File to write (relative to the workspace, or absolute).' }),
    content: Type.String({ description: 'The complete new content of the file.' }),
  },
  { additionalProperties: false },
)

export type WriteArgs = Static<typeof writeArguments>

/** `write`: a whole file, created or replaced atomically, under the agent's authority. */
export function writeTool(ctx: Context, config: Config): ToolDefinition<WriteArgs> {
  return defineTool({
    name: 'write',
    description:
      'Write a whole file (created with its folders, or replaced). To change part of an existing file, use edit. A file outside the workspace, or a protected path (.git, .dsh, agent and editor config), is written only after the user approves that one call.',
    parameters: writeArguments,
    summarize: (args) => `write ${args.path}`,
    needsApproval: async (args, context) =>
      writeApprovalReason(ctx, absolute(context.cwd, args.path), await ctx.sandboxPolicy.authority(context.session)),
    async execute(args, context) {
      const file = absolute(context.cwd, args.path)
      const authority = await writeAuthority(ctx, file, 'write', context.session, context.callId)
      const written = await ctx.fs
        .writeFile(file, args.content, { authority, createParents: true })
        .catch((error) => Promise.reject(asToolError(error)))
      const lines = splitLines(args.content).length
      const diagnostics = await diagnosticsNote(ctx, file, args.content, context, diagnosticsOptions(config))
      return `${written.created ? 'Created' : 'Replaced'} ${display(context.cwd, file)} (${written.bytes} bytes, ${lines} line${lines === 1 ? '' : 's'}).${diagnostics}`
    },
  })
}
