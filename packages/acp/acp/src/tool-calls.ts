import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk'
import { pathOf, type ProposedChange } from '@dsh/session-view'

/** Argument names that hold a 1-based line a reading tool starts at. */
const LINE_KEYS = ['line', 'startLine', 'start_line', 'offset'] as const

type Args = Record<string, unknown>

const asArgs = (value: unknown): Args =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {}

/** The absolute file a call acts on, if its arguments name one. */
export function targetPath(args: unknown, cwd: string): string | undefined {
  const path = pathOf(args)
  return path === undefined ? undefined : absolute(path, cwd)
}

const absolute = (path: string, cwd: string) => (isAbsolute(path) ? path : resolve(cwd, path))

/** Where the editor should follow the agent: the file (and line) a call names. */
export function locationsOf(args: unknown, cwd: string): ToolCallLocation[] {
  const path = targetPath(args, cwd)
  if (!path) return []
  const lineArg = LINE_KEYS.map((key) => asArgs(args)[key]).find(
    (value) => typeof value === 'number' && Number.isInteger(value) && value > 0,
  )
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
 * The diff an edit or write call proposes (read from its arguments by @dsh/session-view, so the editor can
 * show it while it asks for permission, before anything is written). With the file's text before the call
 * (`before`), replacements are shown on the whole file; without it, as the replaced fragments. An insert
 * shows no diff (its line is only meaningful against the file).
 */
export function proposedDiff(
  change: ProposedChange | undefined,
  cwd: string,
  before: string | undefined,
): Extract<ToolCallContent, { type: 'diff' }> | undefined {
  if (!change || change.kind === 'insert') return undefined
  const path = absolute(change.path, cwd)
  if (change.kind === 'write') return { type: 'diff', path, oldText: before ?? null, newText: change.content }
  let text = before
  for (const edit of change.edits)
    text = text === undefined ? undefined : applyReplacement(text, edit.oldText, edit.newText, change.replaceAll)
  if (text !== undefined && before !== undefined) return { type: 'diff', path, oldText: before, newText: text }
  return {
    type: 'diff',
    path,
    oldText: change.edits.map((edit) => edit.oldText).join('\n…\n'),
    newText: change.edits.map((edit) => edit.newText).join('\n…\n'),
  }
}
