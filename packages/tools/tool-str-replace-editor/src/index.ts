import { isAbsolute, relative, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { writeApprovalReason } from '@dsh/tool-kit'
import { defineTool } from '@dsh/tools'
import { Config } from './config.ts'
import { editorArguments, type EditorArgs } from './arguments.ts'
import { Editor, runEditor } from './editor.ts'

export { Config, type EditorArgs }

export const name = 'tool-str-replace-editor'
export const inject = ['tools', 'fs', 'sandboxPolicy']

/**
 * `str_replace_editor` (DESIGN §4), the editor shape many models are trained on: view a file or directory,
 * create a file, replace a unique string, insert after a line. Over ctx.fs, with the agent's authority on
 * every write; relative paths resolve against the session's working directory.
 */
export function apply(ctx: Context, config: Config) {
  const editor = new Editor(ctx, config)
  ctx.tools.register(
    ctx,
    defineTool({
      name: 'str_replace_editor',
      description:
        'View, create and edit files. view: a file with line numbers (view_range [start, end], end -1 for the end) or a directory two levels deep. create: a new file (never overwrites). str_replace: replace old_str, which must occur exactly once, with new_str. insert: new_str after line insert_line (0 for the top). A change outside the workspace, or of a protected path (.git, .dsh, agent and editor config), is made only after the user approves that one call.',
      parameters: editorArguments,
      summarize: (args: EditorArgs) => `${args.command} ${args.path}`,
      needsApproval: async (args: EditorArgs, context) =>
        args.command === 'view' ? undefined : writeApprovalReason(ctx, resolve(context.cwd, args.path), await ctx.sandboxPolicy.authority(context.session)),
      execute(args: EditorArgs, context) {
        const file = resolve(context.cwd, args.path)
        const rel = relative(context.cwd, file)
        const shown = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
        return runEditor(editor, args, file, shown, context)
      },
    }),
  )
}
