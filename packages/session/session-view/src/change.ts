// What an editing call proposes, read from its arguments alone, in the spellings tools use. The web app draws
// it as a diff; ACP shows it to the editor, on the whole file when it can read the file first.
import type { ProposedChange, Replacement } from './shapes.ts'

export type { ProposedChange, Replacement } from './shapes.ts'

/** Argument names that hold the file a tool acts on. */
const PATH_KEYS = ['path', 'file_path', 'filePath', 'file'] as const
/** Argument names that hold a whole new file content. */
const CONTENT_KEYS = ['content', 'text', 'contents', 'file_text'] as const
/** Pairs of argument names for a replacement (old text, new text). */
const REPLACE_KEYS = [
  ['old_string', 'new_string'],
  ['oldText', 'newText'],
  ['old_str', 'new_str'],
  ['old', 'new'],
] as const

type Args = Record<string, unknown>

const asArgs = (value: unknown): Args =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {}
const firstString = (args: Args, keys: readonly string[]): string | undefined => {
  for (const key of keys) if (typeof args[key] === 'string') return args[key] as string
  return undefined
}

/** The file a call names, as written in its arguments (relative paths stay relative). */
export function pathOf(args: unknown): string | undefined {
  return firstString(asArgs(args), PATH_KEYS) || undefined
}

function replacementOf(args: Args): Replacement | undefined {
  for (const [oldKey, newKey] of REPLACE_KEYS) {
    if (typeof args[oldKey] !== 'string') continue
    // str_replace_editor leaves `new_str` out to delete the fragment.
    const newText =
      typeof args[newKey] === 'string'
        ? (args[newKey] as string)
        : oldKey === 'old_str' && args[newKey] === undefined
          ? ''
          : undefined
    if (newText !== undefined) return { oldText: args[oldKey] as string, newText }
  }
  return undefined
}

/** The change a call proposes, if its arguments name a file and describe one. */
export function proposedChange(args: unknown): ProposedChange | undefined {
  const a = asArgs(args)
  const path = pathOf(a)
  if (!path) return undefined
  const single = replacementOf(a)
  if (single)
    return { kind: 'replace', path, edits: [single], replaceAll: a.replace_all === true || a.replaceAll === true }
  if (Array.isArray(a.edits)) {
    const edits = a.edits.map((edit) => replacementOf(asArgs(edit)))
    return edits.length && edits.every((edit) => edit !== undefined)
      ? { kind: 'replace', path, edits: edits as Replacement[], replaceAll: false }
      : undefined
  }
  if (a.command === 'insert' && typeof a.new_str === 'string')
    return {
      kind: 'insert',
      path,
      text: a.new_str,
      ...(typeof a.insert_line === 'number' ? { line: a.insert_line } : {}),
    }
  const content = firstString(a, CONTENT_KEYS)
  return content === undefined ? undefined : { kind: 'write', path, content }
}
