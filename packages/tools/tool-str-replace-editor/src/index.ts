import { isAbsolute, relative, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { writeApprovalReason } from '@dsh/tool-kit'
import { defineTool } from '@dsh/tools'
import { Config } from './config.ts'
import { editorArguments, type EditorArgs } from './arguments.ts'
import { Editor, runEditor } from './editor.ts'
import { contributeEditorSection } from './prompt.ts'

export { Config, type EditorArgs }

export const name = 'tool-str-replace-editor'
export const inject = ['tools', 'fs', 'sandboxPolicy']

/**
 * `str_replace_editor` (docs/architecture.md, "Layers"), the editor shape many models are trained on: view a file or directory,
 * create a file, replace a unique string, insert after a line, undo the last change of a file. Over ctx.fs, with the agent's authority on
 * every write; relative paths resolve against the session's working directory.
 */
export function apply(ctx: Context, config: Config) {
  contributeEditorSection(ctx)
  const editor = new Editor(ctx, config)
  ctx.tools.register(
    ctx,
    defineTool({
      name: 'str_replace_editor',
      description: [
        'View, create and edit text files, one command per call.',
        'view: a file with line numbers (view_range [start, end], end -1 for the end of the file) or a directory two levels deep.',
        'create: a new file with file_text (never overwrites: change an existing file with str_replace).',
        'str_replace: replace old_str, which must occur exactly once (copy it from a view, whitespace included; add surrounding lines to make it unique), with new_str (empty or left out: delete it).',
        'insert: new_str after line insert_line (0 for the top).',
        'undo_edit: put back the file as it was before your last str_replace or insert of it in this session.',
        'View a file before changing it. Not for running programs or searching many files: use the shell for that.',
        'A change outside the workspace, or of a protected path (.git, .dsh, agent and editor config), is made only after the user approves that one call.',
      ].join('\n'),
      parameters: editorArguments,
      summarize: (args: EditorArgs) => `${args.command} ${args.path}`,
      needsApproval: async (args: EditorArgs, context) =>
        args.command === 'view'
          ? undefined
          : writeApprovalReason(
              ctx,
              resolve(context.cwd, args.path),
              await ctx.sandboxPolicy.authority(context.session),
            ),
      execute(args: EditorArgs, context) {
        const file = resolve(context.cwd, args.path)
        const rel = relative(context.cwd, file)
        const shown = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
        return runEditor(editor, args, file, shown, context)
      },
    }),
  )
}
