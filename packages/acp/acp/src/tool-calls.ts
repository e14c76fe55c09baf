import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk'

/** Argument names that hold the file a tool acts on, in the spellings tools use. */
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
/** Argument names that hold a 1-based line a reading tool starts at. */
const LINE_KEYS = ['line', 'startLine', 'start_line', 'offset'] as const

type Args = Record<string, unknown>

const asArgs = (value: unknown): Args => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {})
const firstString = (args: Args, keys: readonly string[]): string | undefined => {
  for (const key of keys) if (typeof args[key] === 'string') return args[key] as string
  return undefined
}

/** The absolute file a call acts on, if its arguments name one. */
export function targetPath(args: unknown, cwd: string): string | undefined {
  const path = firstString(asArgs(args), PATH_KEYS)
  if (!path) return undefined
  return isAbsolute(path) ? path : resolve(cwd, path)
}

/** Where the editor should follow the agent: the file (and line) a call names. */
export function locationsOf(args: unknown, cwd: string): ToolCallLocation[] {
  const path = targetPath(args, cwd)
  if (!path) return []
  const lineArg = LINE_KEYS.map((key) => asArgs(args)[key]).find((value) => typeof value === 'number' && Number.isInteger(value) && value > 0)
  return [{ path, ...(typeof lineArg === 'number' ? { line: lineArg } : {}) }]
}

/** A tool's kind: `name:command` first (a multi-command tool such as `str_replace_editor:view`), then `name`. */
export function kindOf(name: string, args: unknown, kinds: Record<string, ToolKind>): ToolKind {
  const command = asArgs(args).command
  return (typeof command === 'string' ? kinds[`${name}:${command}`] : undefined) ?? kinds[name] ?? 'other'
}

/**
 * A file's current text for the old side of a diff, read synchronously so it is taken before the call can
 * run. Undefined when absent, unreadable, larger than `maxBytes`, or not valid UTF-8.
 */
export function readBefore(path: string, maxBytes: number): string | undefined {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const size = fstatSync(fd).size
    if (size > maxBytes) return undefined
    const buffer = Buffer.alloc(size)
    let read = 0
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read)
      if (n === 0) break
      read += n
    }
    const text = new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, read))
    return text
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

function applyReplacement(text: string, oldText: string, newText: string, all: boolean): string | undefined {
  if (!oldText || !text.includes(oldText)) return undefined
  return all ? text.split(oldText).join(newText) : text.replace(oldText, () => newText)
}

/**
 * The diff an edit or write call proposes, computed from its arguments (so the editor can show it while it
 * asks for permission, before anything is written). With the file's text before the call (`before`), a
 * replacement is shown on the whole file; without it, as the replaced fragment.
 */
export function proposedDiff(args: unknown, cwd: string, before: string | undefined): Extract<ToolCallContent, { type: 'diff' }> | undefined {
  const path = targetPath(args, cwd)
  if (!path) return undefined
  const a = asArgs(args)
  for (const [oldKey, newKey] of REPLACE_KEYS) {
    if (typeof a[oldKey] !== 'string' || typeof a[newKey] !== 'string') continue
    const oldText = a[oldKey] as string
    const newText = a[newKey] as string
    const whole = before === undefined ? undefined : applyReplacement(before, oldText, newText, a.replace_all === true || a.replaceAll === true)
    return whole === undefined ? { type: 'diff', path, oldText, newText } : { type: 'diff', path, oldText: before, newText: whole }
  }
  if (Array.isArray(a.edits)) {
    let text = before
    const fragments: { oldText: string; newText: string }[] = []
    for (const edit of a.edits) {
      const pair = REPLACE_KEYS.map(([o, n]) => [asArgs(edit)[o], asArgs(edit)[n]]).find(([o, n]) => typeof o === 'string' && typeof n === 'string') as [string, string] | undefined
      if (!pair) return undefined
      fragments.push({ oldText: pair[0], newText: pair[1] })
      text = text === undefined ? undefined : applyReplacement(text, pair[0], pair[1], false)
    }
    if (text !== undefined && before !== undefined) return { type: 'diff', path, oldText: before, newText: text }
    return { type: 'diff', path, oldText: fragments.map((f) => f.oldText).join('\n…\n'), newText: fragments.map((f) => f.newText).join('\n…\n') }
  }
  const content = firstString(a, CONTENT_KEYS)
  if (content === undefined) return undefined
  return { type: 'diff', path, oldText: before ?? null, newText: content }
}
