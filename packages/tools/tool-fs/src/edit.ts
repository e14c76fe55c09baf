import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import { defineTool, ToolError, Type, type Static, type ToolDefinition } from '@dsh/tools'
import type { Config } from './config.ts'
import {
  closestMatch,
  diagnosticsNote,
  diagnosticsOptions,
  lineAt,
  numbered,
  splitLines,
  writeApprovalReason,
  writeAuthority,
} from '@dsh/tool-kit'
import { replacementDiff } from './diff.ts'
import { occurrences } from './lines.ts'
import { absolute, asToolError, display } from './paths.ts'

const editArguments = Type.Object(
  {
    path: Type.String({ description: 'File to edit (relative to the workspace, or absolute).' }),
    old_string: Type.String({ description: 'The exact text to replace.' }),
    new_string: Type.String({ description: 'The text to put in its place.' }),
    replace_all: Type.Optional(Type.Boolean({ description: 'Replace every occurrence (default false).' })),
  },
  { additionalProperties: false },
)

export type EditArgs = Static<typeof editArguments>

function notFound(file: string, text: string, old: string, config: Config): ToolError {
  const crlf =
    text.includes('\r\n') && old.includes('\n') && !old.includes('\r\n') && text.includes(old.replace(/\n/g, '\r\n'))
  if (crlf)
    return new ToolError(
      'EDIT_NOT_FOUND',
      `old_string was not found in ${file}. The file has CRLF line ends: old_string must contain them too (\\r\\n).`,
    )
  const hint =
    'It must match the file exactly, whitespace and indentation included: read the file again and copy the text.'
  const near = closestMatch(text, old, {
    minSimilarity: config.closestMatchMinSimilarity,
    maxLines: config.closestMatchMaxFileLines,
  })
  if (!near) return new ToolError('EDIT_NOT_FOUND', `old_string was not found in ${file}. ${hint}`)
  const lines = numbered(splitLines(text).slice(near.from - 1, near.to), near.from, config.maxLineChars)
  const how = near.whitespaceOnly
    ? 'differs only in whitespace or indentation'
    : `is ${Math.round(near.similarity * 100)}% alike`
  const where = near.from === near.to ? `line ${near.from}` : `lines ${near.from}–${near.to}`
  return new ToolError(
    'EDIT_NOT_FOUND',
    `old_string was not found in ${file}. The closest text, at ${where}, ${how}:\n${lines}\n${hint}`,
  )
}

/** `edit`: an exact string replacement in an existing text file, unique unless `replace_all`. */
export function editTool(ctx: Context, config: Config): ToolDefinition<EditArgs> {
  return defineTool({
    name: 'edit',
    description: [
      'Replace exact text in an existing file and show the change as a compact diff. Read the file first (edits of unread or since-changed files are refused).',
      'old_string must match the file exactly, indentation included, and occur once: add surrounding lines to make it unique, or set replace_all to change every occurrence (a rename). Copy it from read output without the line-number prefix.',
      'When old_string is not found, the closest text in the file is shown: copy from it. To create a file or rewrite all of it, use write.',
    ].join('\n'),
    parameters: editArguments,
    summarize: (args) => `edit ${args.path}`,
    needsApproval: async (args, context) =>
      writeApprovalReason(ctx, absolute(context.cwd, args.path), await ctx.sandboxPolicy.authority(context.session)),
    async execute(args, context) {
      const file = absolute(context.cwd, args.path)
      const shown = display(context.cwd, file)
      if (!args.old_string)
        throw new ToolError(
          'EDIT_EMPTY_OLD_STRING',
          'old_string is empty: to create a file or replace all of it, use write.',
        )
      if (args.old_string === args.new_string)
        throw new ToolError('EDIT_NO_CHANGE', 'old_string and new_string are the same: nothing to change.')
      const hints = {
        FS_NOT_FOUND: 'To create it, use write',
        FS_CHANGED: 'It changed while being edited: read it again',
      }
      try {
        const { version } = await ctx.fs.stat(file)
        const readAuthority = await ctx.sandboxPolicy.authority(context.session)
        let text: string
        try {
          text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
            await ctx.fs.readBytes(file, { authority: readAuthority }),
          )
        } catch (error) {
          if (error instanceof TypeError)
            throw new ToolError('FS_BINARY', `${shown} is not a UTF-8 text file: it cannot be edited as text.`)
          throw error
        }
        const found = occurrences(text, args.old_string)
        if (!found.length) throw notFound(shown, text, args.old_string, config)
        if (found.length > 1 && !args.replace_all) {
          const lines = found.map((at) => lineAt(text, at))
          throw new ToolError(
            'EDIT_NOT_UNIQUE',
            `old_string occurs ${found.length} times in ${shown} (lines ${lines.join(', ')}). Include more surrounding lines to make it unique, or set replace_all: true to replace them all.`,
          )
        }
        const targets = args.replace_all ? found : found.slice(0, 1)
        let updated = ''
        let from = 0
        for (const at of targets) {
          updated += text.slice(from, at) + args.new_string
          from = at + args.old_string.length
        }
        updated += text.slice(from)
        const authority = await writeAuthority(ctx, file, 'edit', context.session, context.callId)
        await ctx.fs.replaceFile(file, updated, { authority, expect: version })
        const count = targets.length === 1 ? '1 occurrence' : `${targets.length} occurrences`
        const diff = replacementDiff(text, updated, targets[0]!, args.old_string, args.new_string, {
          contextLines: config.editContextLines,
          maxLines: config.maxSnippetLines,
          maxLineChars: config.maxLineChars,
        })
        const others =
          targets.length > 1
            ? `\n[The other ${targets.length - 1} replacements are alike; read the file to see them.]`
            : ''
        const diagnostics = await diagnosticsNote(ctx, file, updated, context, diagnosticsOptions(config))
        return `Edited ${shown}: replaced ${count}.\n${diff}${others}${diagnostics}`
      } catch (error) {
        throw asToolError(error, hints)
      }
    },
  })
}
