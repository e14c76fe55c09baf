import { isAbsolute, relative, resolve } from 'node:path'
import { FsError } from '@dsh/fs'
import { ToolError } from '@dsh/tools'

/** A path as the model gave it, made absolute against the session's working directory. */
export const absolute = (cwd: string, path: string) => resolve(cwd, path)

/** How a path is shown back: relative to the working directory when inside it, else absolute. */
export function display(cwd: string, path: string): string {
  const rel = relative(cwd, path)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}

/** An FsError as the error result the model reads (its code and message); anything else passes through. */
export function asToolError(error: unknown, hints: Partial<Record<string, string>> = {}): unknown {
  if (!(error instanceof FsError)) return error
  const hint = hints[error.code]
  return new ToolError(error.code, hint ? `${error.message}. ${hint}` : error.message)
}
