import { UsageError, type OptionSpec, type ParsedArgs } from '@dsh/cmdline'

export const SEARCH_OPTIONS = {
  json: { type: 'boolean' },
  'all-workspaces': { type: 'boolean' },
  cwd: { type: 'string' },
  limit: { type: 'string' },
} as const satisfies OptionSpec

export const REINDEX_OPTIONS = { json: { type: 'boolean' } } as const satisfies OptionSpec

/** `dsh sessions search "query" [--json] [--all-workspaces | --cwd <dir>] [--limit n]` */
export interface SearchInvocation {
  command: 'sessions-search'
  query: string
  cwd?: string
  allWorkspaces: boolean
  limit?: number
  json: boolean
}

/** `dsh sessions reindex [--json]` */
export interface ReindexInvocation {
  command: 'sessions-reindex'
  json: boolean
}

type Parser = <T extends OptionSpec>(options: T, argv?: readonly string[]) => ParsedArgs<T>

/** Reads `sessions search|reindex` (the words after `sessions <sub>` are `more`). */
export function readSearchCommand(
  sub: 'search' | 'reindex',
  more: string[],
  argv: readonly string[],
  parse: Parser,
): SearchInvocation | ReindexInvocation {
  if (sub === 'reindex') {
    const { values } = parse(REINDEX_OPTIONS, argv)
    if (more.length) throw new UsageError(`dsh sessions reindex takes no arguments (got "${more.join(' ')}")`)
    return { command: 'sessions-reindex', json: !!values.json }
  }
  const { values } = parse(SEARCH_OPTIONS, argv)
  const query = more.join(' ').trim()
  if (!query) throw new UsageError('dsh sessions search needs words to look for (dsh sessions search "words")')
  if (values['all-workspaces'] && values.cwd !== undefined)
    throw new UsageError('--all-workspaces and --cwd cannot be combined')
  let limit: number | undefined
  if (values.limit !== undefined) {
    if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1)
      throw new UsageError(`--limit must be a whole number ≥ 1, got "${values.limit}"`)
    limit = Number(values.limit)
  }
  return {
    command: 'sessions-search',
    query,
    ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
    allWorkspaces: !!values['all-workspaces'],
    ...(limit !== undefined ? { limit } : {}),
    json: !!values.json,
  }
}
