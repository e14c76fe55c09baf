import { Type, type Static } from '@dsh/tools'

export const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const

/** The editor's arguments, declared once: the schema the model sees, the validator and `EditorArgs`. */
export const editorArguments = Type.Object(
  {
    // A plain string enum (the shape models are trained on), not TypeBox's union of literals.
    command: Type.Unsafe<(typeof COMMANDS)[number]>({
      type: 'string',
      enum: [...COMMANDS],
      description: `One of: ${COMMANDS.join(', ')}.`,
    }),
    path: Type.String({ description: 'File or directory (relative to the workspace, or absolute).' }),
    file_text: Type.Optional(Type.String({ description: 'create: the content of the new file.' })),
    old_str: Type.Optional(
      Type.String({ description: 'str_replace: the exact text to replace (must be unique in the file).' }),
    ),
    new_str: Type.Optional(
      Type.String({ description: 'str_replace: the replacement (default empty); insert: the text to insert.' }),
    ),
    insert_line: Type.Optional(
      Type.Integer({ minimum: 0, description: 'insert: the line after which new_str goes (0: the top).' }),
    ),
    view_range: Type.Optional(
      Type.Array(Type.Integer(), {
        minItems: 2,
        maxItems: 2,
        description: 'view: [start, end] lines, 1-based; end -1 for the end of the file.',
      }),
    ),
  },
  { additionalProperties: false },
)

export type EditorArgs = Static<typeof editorArguments>
