import { UsageError, type OptionSpec, type ParsedArgs } from '@dsh/cmdline'

export const MANAGE_OPTIONS = {} as const satisfies OptionSpec
export const DELETE_OPTIONS = { yes: { type: 'boolean' } } as const satisfies OptionSpec
export const EXPORT_OPTIONS = { output: { type: 'string', short: 'o' } } as const satisfies OptionSpec

/** `dsh sessions rename <id> "title"` */
export interface RenameInvocation {
  command: 'sessions-rename'
  id: string
  title: string
}

/** `dsh sessions archive <id>` / `dsh sessions unarchive <id>` */
export interface ArchiveInvocation {
  command: 'sessions-archive'
  id: string
  archived: boolean
}

/** `dsh sessions delete <id> [--yes]` */
export interface DeleteInvocation {
  command: 'sessions-delete'
  id: string
  /** Delete without asking (required when stdin is not a terminal). */
  yes: boolean
}

/** `dsh sessions export <id> -o <file.tar.gz>` / `dsh sessions import <file.tar.gz>` */
export type TransferInvocation =
  { command: 'sessions-export'; id: string; output: string } | { command: 'sessions-import'; file: string }

type Parser = <T extends OptionSpec>(options: T, argv?: readonly string[]) => ParsedArgs<T>

/** Reads `sessions delete <id> [--yes]`. */
export function readDeleteCommand(more: string[], argv: readonly string[], parse: Parser): DeleteInvocation {
  const { values } = parse(DELETE_OPTIONS, argv)
  const [id, ...rest] = more
  if (id === undefined) throw new UsageError('dsh sessions delete needs a session id (see dsh sessions list)')
  if (rest.length) throw new UsageError(`dsh sessions delete takes one session id (got "${more.join(' ')}")`)
  return { command: 'sessions-delete', id, yes: !!values.yes }
}

/** Reads `sessions export <id> -o <file>` and `sessions import <file>`. */
export function readArchiveCommand(
  sub: 'export' | 'import',
  more: string[],
  argv: readonly string[],
  parse: Parser,
): TransferInvocation {
  const { values } = parse(EXPORT_OPTIONS, argv)
  const [target, ...rest] = more
  if (rest.length)
    throw new UsageError(
      `dsh sessions ${sub} takes one ${sub === 'export' ? 'session id' : 'file'} (got "${more.join(' ')}")`,
    )
  if (sub === 'import') {
    if (target === undefined)
      throw new UsageError('dsh sessions import needs the archive to import (dsh sessions import <file.tar.gz>)')
    if (values.output !== undefined)
      throw new UsageError('dsh sessions import takes no -o (the sessions go to this DSH_HOME)')
    return { command: 'sessions-import', file: target }
  }
  if (target === undefined) throw new UsageError('dsh sessions export needs a session id (see dsh sessions list)')
  if (!values.output)
    throw new UsageError(`dsh sessions export needs the file to write: dsh sessions export ${target} -o <file.tar.gz>`)
  return { command: 'sessions-export', id: target, output: values.output }
}

/** Reads `sessions rename|archive|unarchive` (the words after `sessions <sub>` are `more`). */
export function readManageCommand(
  sub: 'rename' | 'archive' | 'unarchive',
  more: string[],
  argv: readonly string[],
  parse: Parser,
): RenameInvocation | ArchiveInvocation {
  parse(MANAGE_OPTIONS, argv) // refuses any flag, by name
  const [id, ...rest] = more
  if (id === undefined) throw new UsageError(`dsh sessions ${sub} needs a session id (see dsh sessions list)`)
  if (sub === 'rename') {
    const title = rest.join(' ').trim()
    if (!title) throw new UsageError('dsh sessions rename needs the new title (dsh sessions rename <id> "title")')
    return { command: 'sessions-rename', id, title }
  }
  if (rest.length) throw new UsageError(`dsh sessions ${sub} takes one session id (got "${more.join(' ')}")`)
  return { command: 'sessions-archive', id, archived: sub === 'archive' }
}
