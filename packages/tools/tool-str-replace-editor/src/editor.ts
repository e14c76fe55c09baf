import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import { ToolError, type ToolContext } from '@dsh/tools'

type Session = ToolContext['session']
import type { Config } from './config.ts'
import {
  closestMatch,
  diagnosticsNote,
  diagnosticsOptions,
  lineAt,
  numbered,
  splitLines,
  writeAuthority,
} from '@dsh/tool-kit'
import { asToolError } from './text.ts'
import { COMMANDS, type EditorArgs } from './arguments.ts'

export type { EditorArgs }

const need = (value: unknown, name: string, command: string) => {
  if (value === undefined) throw new ToolError('INVALID_ARGS', `${command} needs ${name}`)
}

/** The 1-based lines of `after` that differ from `before` (the first and last differing line). */
function changedLines(before: string, after: string): { from: number; to: number } {
  const a = splitLines(before)
  const b = splitLines(after)
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  return { from: head + 1, to: Math.max(head + 1, b.length - tail) }
}

/** The commands of the editor, each acting on one absolute path shown to the model as `shown`. */
export class Editor {
  /**
   * Per session and file, the texts before each change and the text the last change left, for undo_edit.
   * In memory on purpose: the versions are file contents, not facts the model sees, and the log would grow
   * by a whole file per edit; after a restart there is nothing to undo (the README says so).
   */
  private readonly undo = new WeakMap<Session, Map<string, { before: string[]; after: string }>>()

  constructor(
    private readonly ctx: Context,
    private readonly config: Config,
  ) {}

  async view(file: string, shown: string, range: number[] | undefined, context: ToolContext): Promise<string> {
    const stat = await this.ctx.fs.stat(file)
    const authority = await this.ctx.sandboxPolicy.authority(context.session)
    if (stat.type === 'directory') {
      if (range) throw new ToolError('INVALID_ARGS', 'view_range applies to files, not directories')
      return this.listDirectory(file, shown, authority)
    }
    const [start = 1, end = -1] = range ?? []
    if (range && (range.length !== 2 || start < 1 || (end !== -1 && end < start))) {
      throw new ToolError(
        'INVALID_ARGS',
        `view_range must be [start, end] with 1 <= start <= end, or end -1 for the end of the file (got ${JSON.stringify(range)})`,
      )
    }
    let result
    try {
      result = await this.ctx.fs.readText(file, {
        startLine: start,
        maxLines: end === -1 ? this.config.viewLines : end - start + 1,
        maxBytes: this.config.viewMaxBytes,
        authority,
      })
    } catch (error) {
      if (error instanceof FsError && error.code === 'FS_BINARY')
        return `${shown} is a binary file (${stat.size} bytes); its contents are not shown.`
      throw error
    }
    if (!result.totalLines) return `${shown} is empty.`
    if (start > result.totalLines)
      throw new ToolError('INVALID_ARGS', `${shown} has ${result.totalLines} lines; view_range starts past its end`)
    const body = numbered(splitLines(result.text), start, this.config.maxLineChars)
    const more =
      result.endLine < result.totalLines
        ? `\n[Showing lines ${start}–${result.endLine} of ${result.totalLines}${result.truncated ? ` (one view returns at most ${this.config.viewMaxBytes} bytes)` : ''}. View more with view_range [${result.endLine + 1}, -1].]`
        : ''
    return `Lines of ${shown}:\n${body}${more}`
  }

  async create(file: string, shown: string, text: string, context: ToolContext): Promise<string> {
    if (await this.ctx.fs.exists(file))
      throw new ToolError(
        'EDITOR_FILE_EXISTS',
        `${shown} already exists: create does not overwrite. Change it with str_replace or insert.`,
      )
    const authority = await writeAuthority(this.ctx, file, 'write', context.session, context.callId)
    const written = await this.ctx.fs.writeFile(file, text, { authority, createParents: true })
    const lines = splitLines(text).length
    return `Created ${shown} (${written.bytes} bytes, ${lines} line${lines === 1 ? '' : 's'}).${await this.diagnostics(file, text, context)}`
  }

  async replace(file: string, shown: string, oldText: string, newText: string, context: ToolContext): Promise<string> {
    if (!oldText) throw new ToolError('INVALID_ARGS', 'old_str is empty: give the exact text to replace')
    const { text, version } = await this.readWhole(file, shown, context)
    const first = text.indexOf(oldText)
    if (first === -1) throw this.notFound(text, shown, oldText)
    const second = text.indexOf(oldText, first + oldText.length)
    if (second !== -1) {
      const lines: number[] = []
      for (let at = first; at !== -1; at = text.indexOf(oldText, at + oldText.length)) lines.push(lineAt(text, at))
      throw new ToolError(
        'EDITOR_NOT_UNIQUE',
        `old_str occurs ${lines.length} times in ${shown} (lines ${lines.join(', ')}): include more surrounding lines to make it unique.`,
      )
    }
    const updated = text.slice(0, first) + newText + text.slice(first + oldText.length)
    await this.save(file, updated, version, context)
    this.remember(context.session, file, text, updated)
    return `Edited ${shown}:\n${this.snippet(updated, lineAt(updated, first), lineAt(updated, first + Math.max(0, newText.length - 1)))}${await this.diagnostics(file, updated, context)}`
  }

  async insert(file: string, shown: string, after: number, newText: string, context: ToolContext): Promise<string> {
    const { text, version } = await this.readWhole(file, shown, context)
    const total = splitLines(text).length
    if (!Number.isInteger(after) || after < 0 || after > total)
      throw new ToolError(
        'INVALID_ARGS',
        `insert_line must be between 0 (the top) and ${total} (after the last line) in ${shown}; got ${after}`,
      )
    // The offset just past line `after` (with its line end); a last line without one gets one first.
    let offset = 0
    for (let line = 0; line < after; line++) offset = text.indexOf('\n', offset) + 1 || text.length
    const head = offset === text.length && text && !text.endsWith('\n') ? `${text}\n` : text.slice(0, offset)
    const inserted = newText.endsWith('\n') || !newText ? newText : `${newText}\n`
    const updated = head + inserted + text.slice(offset)
    await this.save(file, updated, version, context)
    this.remember(context.session, file, text, updated)
    const added = splitLines(inserted).length
    return `Inserted ${added} line${added === 1 ? '' : 's'} after line ${after} of ${shown}:\n${this.snippet(updated, after + 1, after + Math.max(1, added))}${await this.diagnostics(file, updated, context)}`
  }

  /** Puts back the text before the last str_replace or insert of this file in the session. */
  async undoEdit(file: string, shown: string, context: ToolContext): Promise<string> {
    const history = this.undo.get(context.session)?.get(file)
    if (!history?.before.length)
      throw new ToolError(
        'EDITOR_NOTHING_TO_UNDO',
        `No str_replace or insert of ${shown} in this session is left to undo.`,
      )
    const { text, version } = await this.readWhole(file, shown, context)
    if (text !== history.after)
      throw new ToolError(
        'FS_CHANGED',
        `${shown} changed since the last edit of this editor: undo_edit would lose that change. View it and edit it instead.`,
      )
    const previous = history.before.pop()!
    await this.save(file, previous, version, context)
    history.after = previous
    const { from, to } = changedLines(text, previous)
    return `Undid the last edit of ${shown}${history.before.length ? ` (${history.before.length} more can be undone)` : ''}:\n${this.snippet(previous, from, to)}${await this.diagnostics(file, previous, context)}`
  }

  /** What the file's language server reports now (diagnosticsNote of @dsh/tool-kit; '' without ctx.lsp). */
  private diagnostics(file: string, text: string, context: ToolContext): Promise<string> {
    return diagnosticsNote(this.ctx, file, text, context, diagnosticsOptions(this.config))
  }

  /** Not found, with the most similar stretch of the file when there is one (closestMatch of @dsh/tool-kit). */
  private notFound(text: string, shown: string, oldText: string): ToolError {
    const hint = 'it must match exactly, whitespace and indentation included. View the file and copy the text.'
    const near = closestMatch(text, oldText, {
      minSimilarity: this.config.closestMatchMinSimilarity,
      maxLines: this.config.closestMatchMaxFileLines,
    })
    if (!near) return new ToolError('EDITOR_NOT_FOUND', `old_str was not found in ${shown}: ${hint}`)
    const how = near.whitespaceOnly
      ? 'differs only in whitespace or indentation'
      : `is ${Math.round(near.similarity * 100)}% alike`
    const lines = numbered(splitLines(text).slice(near.from - 1, near.to), near.from, this.config.maxLineChars)
    return new ToolError(
      'EDITOR_NOT_FOUND',
      `old_str was not found in ${shown}: ${hint} The closest text, at line${near.from === near.to ? ` ${near.from}` : `s ${near.from}–${near.to}`}, ${how}:\n${lines}`,
    )
  }

  private remember(session: Session, file: string, before: string, after: string) {
    if (!this.config.undoDepth) return
    let files = this.undo.get(session)
    if (!files) this.undo.set(session, (files = new Map()))
    const history = files.get(file) ?? { before: [], after }
    history.before.push(before)
    if (history.before.length > this.config.undoDepth) history.before.shift()
    history.after = after
    files.set(file, history)
  }

  private async readWhole(file: string, shown: string, context: ToolContext) {
    const { version, type } = await this.ctx.fs.stat(file)
    if (type === 'directory') throw new ToolError('FS_IS_DIRECTORY', `${shown} is a directory`)
    const authority = await this.ctx.sandboxPolicy.authority(context.session)
    try {
      return {
        text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
          await this.ctx.fs.readBytes(file, { authority }),
        ),
        version,
      }
    } catch (error) {
      if (error instanceof TypeError)
        throw new ToolError('FS_BINARY', `${shown} is not a UTF-8 text file: it cannot be edited as text.`)
      throw error
    }
  }

  private async save(file: string, text: string, version: { mtimeMs: number; size: number }, context: ToolContext) {
    const authority = await writeAuthority(this.ctx, file, 'edit', context.session, context.callId)
    await this.ctx.fs.replaceFile(file, text, { authority, expect: version })
  }

  private snippet(text: string, from: number, to: number): string {
    const lines = splitLines(text)
    const first = Math.max(1, from - this.config.snippetContextLines)
    const wanted = Math.min(lines.length, to + this.config.snippetContextLines)
    const last = Math.min(wanted, first + this.config.maxSnippetLines - 1)
    const shown = numbered(lines.slice(first - 1, last), first, this.config.maxLineChars)
    return last < wanted ? `${shown}\n[… lines ${last + 1}–${wanted} of the change not shown]` : shown
  }

  private async listDirectory(dir: string, shown: string, authority: SandboxAuthority): Promise<string> {
    const entries: string[] = []
    let total = 0
    for await (const entry of this.ctx.fs.walk(dir, {
      maxDepth: 1,
      skip: (item) => item.name.startsWith('.'),
      authority,
    })) {
      total++
      if (entries.length < this.config.maxEntries)
        entries.push(entry.type === 'directory' ? `${entry.relativePath}/` : entry.relativePath)
    }
    const more = total > entries.length ? `\n[Showing ${entries.length} of ${total} entries.]` : ''
    return `Files and directories in ${shown} (two levels, hidden ones left out):\n${entries.join('\n') || '(empty)'}${more}`
  }
}

/** Runs one call: checks the arguments its command needs, then maps fs failures to typed error results. */
export async function runEditor(
  editor: Editor,
  args: EditorArgs,
  file: string,
  shown: string,
  context: ToolContext,
): Promise<string> {
  try {
    switch (args.command) {
      case 'view':
        return await editor.view(file, shown, args.view_range, context)
      case 'create':
        need(args.file_text, 'file_text', 'create')
        return await editor.create(file, shown, args.file_text!, context)
      case 'str_replace':
        need(args.old_str, 'old_str', 'str_replace')
        return await editor.replace(file, shown, args.old_str!, args.new_str ?? '', context)
      case 'insert':
        need(args.insert_line, 'insert_line', 'insert')
        need(args.new_str, 'new_str', 'insert')
        return await editor.insert(file, shown, args.insert_line!, args.new_str!, context)
      case 'undo_edit':
        return await editor.undoEdit(file, shown, context)
      default:
        // The schema's enum refuses this first; kept so a caller that skips validation gets the list too.
        throw new ToolError(
          'INVALID_ARGS',
          `Unknown command "${String(args.command)}": use one of ${COMMANDS.join(', ')}.`,
        )
    }
  } catch (error) {
    throw asToolError(error)
  }
}
