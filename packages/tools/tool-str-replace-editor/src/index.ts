import { isAbsolute, relative, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { writeApprovalReason } from '@dsh/tool-kit'
import { Config } from './config.ts'
import { Editor, runEditor, type EditorArgs } from './editor.ts'

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
  ctx.tools.register(ctx, {
    name: 'str_replace_editor',
    description: 'View, create and edit files. view: a file with line numbers (view_range [start, end], end -1 for the end) or a directory two levels deep. create: a new file (never overwrites). str_replace: replace old_str, which must occur exactly once, with new_str. insert: new_str after line insert_line (0 for the top). A change outside the workspace, or of a protected path (.git, .dsh, agent and editor config), is made only after the user approves that one call.',
    parameters: {
      type: 'object',
      required: ['command', 'path'],
      additionalProperties: false,
      properties: {
        command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert'] },
        path: { type: 'string', description: 'File or directory (relative to the workspace, or absolute).' },
        file_text: { type: 'string', description: 'create: the content of the new file.' },
        old_str: { type: 'string', description: 'str_replace: the exact text to replace (must be unique in the file).' },
        new_str: { type: 'string', description: 'str_replace: the replacement (default empty); insert: the text to insert.' },
        insert_line: { type: 'integer', minimum: 0, description: 'insert: the line after which new_str goes (0: the top).' },
        view_range: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2, description: 'view: [start, end] lines, 1-based; end -1 for the end of the file.' },
      },
    },
    summarize: (args: EditorArgs) => `${args.command} ${args.path}`,
    needsApproval: async (args: EditorArgs, context) => (args.command === 'view' ? undefined : writeApprovalReason(ctx, resolve(context.cwd, args.path), await ctx.sandboxPolicy.authority(context.session))),
    execute(args: EditorArgs, context) {
      const file = resolve(context.cwd, args.path)
      const rel = relative(context.cwd, file)
      const shown = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
      return runEditor(editor, args, file, shown, context)
    },
  })
}
