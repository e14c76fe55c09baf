import { UsageError, type OptionSpec, type ParsedArgs } from '@dsh/cmdline'

export const DIFF_OPTIONS = { turn: { type: 'string' }, json: { type: 'boolean' } } as const satisfies OptionSpec
export const REWIND_OPTIONS = {
  'to-turn': { type: 'string' },
  force: { type: 'boolean' },
  fork: { type: 'boolean' },
  preview: { type: 'boolean' },
  json: { type: 'boolean' },
} as const satisfies OptionSpec

/** `dsh sessions diff <id> [--turn N] [--json]` */
export interface DiffInvocation {
  command: 'sessions-diff'
  id: string
  fromTurn: number
  json: boolean
}

/** `dsh rewind <id> --to-turn N [--force] [--fork] [--preview] [--json]` */
export interface RewindInvocation {
  command: 'rewind'
  id: string
  toTurn: number
  force: boolean
  fork: boolean
  /** Say what the rewind would do; write and log nothing. */
  preview: boolean
  json: boolean
}

type Parser = <T extends OptionSpec>(options: T, argv?: readonly string[]) => ParsedArgs<T>

const turnNumber = (flag: string, text: string) => {
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new UsageError(`${flag} must be a turn number (a whole number ≥ 1), got "${text}"`)
  return Number(text)
}

/** The words after `sessions diff` are `more`. */
export function readDiffCommand(more: string[], argv: readonly string[], parse: Parser): DiffInvocation {
  const { values } = parse(DIFF_OPTIONS, argv)
  const [id, ...extra] = more
  if (id === undefined) throw new UsageError('dsh sessions diff needs a session id (see dsh sessions list)')
  if (extra.length) throw new UsageError(`dsh sessions diff takes one session id (got "${more.join(' ')}")`)
  return {
    command: 'sessions-diff',
    id,
    fromTurn: values.turn === undefined ? 1 : turnNumber('--turn', values.turn),
    json: !!values.json,
  }
}

/** `argv` starts with the word `rewind` (its `--fork` is a switch, unlike a run's `--fork <id>`). */
export function readRewindCommand(argv: readonly string[], parse: Parser): RewindInvocation {
  const { values, positionals } = parse(REWIND_OPTIONS, argv)
  const [, id, ...extra] = positionals
  if (id === undefined) throw new UsageError('dsh rewind needs a session id (dsh rewind <id> --to-turn N)')
  if (extra.length) throw new UsageError(`dsh rewind takes one session id (got "${positionals.slice(1).join(' ')}")`)
  if (values['to-turn'] === undefined)
    throw new UsageError(
      'dsh rewind needs --to-turn N: files go back to their state before turn N (see dsh sessions diff <id>)',
    )
  if (values.preview && values.fork)
    throw new UsageError('dsh rewind --preview writes nothing, so it does not fork: drop --fork or --preview')
  return {
    command: 'rewind',
    id,
    toTurn: turnNumber('--to-turn', values['to-turn']),
    force: !!values.force,
    fork: !!values.fork,
    preview: !!values.preview,
    json: !!values.json,
  }
}
