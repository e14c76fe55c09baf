import { UsageError, type OptionSpec, type ParsedArgs } from '@dsh/cmdline'
import { GROUPINGS, type Grouping } from '@dsh/usage-kit'

export const USAGE_OPTIONS = {
  since: { type: 'string' },
  by: { type: 'string' },
  json: { type: 'boolean' },
  'all-workspaces': { type: 'boolean' },
  cwd: { type: 'string' },
} as const satisfies OptionSpec

/** `dsh usage [--since 7d|24h|2026-11-01] [--by model|workspace|day] [--json] [--all-workspaces | --cwd <dir>]` */
export interface UsageInvocation {
  command: 'usage'
  /** Epoch milliseconds: only requests logged at or after it count. */
  since?: number
  /** The `--since` as typed, for the heading. */
  sinceText?: string
  by: Grouping
  cwd?: string
  allWorkspaces: boolean
  json: boolean
}

type Parser = <T extends OptionSpec>(options: T, argv?: readonly string[]) => ParsedArgs<T>

const HOUR_MS = 3_600_000

/** Reads `dsh usage …` (`more` are the words after `usage`); `now` anchors a relative `--since`. */
export function readUsageCommand(more: string[], argv: readonly string[], parse: Parser, now: number): UsageInvocation {
  const { values } = parse(USAGE_OPTIONS, argv)
  if (more.length) throw new UsageError(`dsh usage takes no arguments (got "${more.join(' ')}")`)
  if (values['all-workspaces'] && values.cwd !== undefined)
    throw new UsageError('--all-workspaces and --cwd cannot be combined')
  const by = values.by ?? 'model'
  if (!(GROUPINGS as readonly string[]).includes(by))
    throw new UsageError(`--by must be one of ${GROUPINGS.join(', ')}, got "${by}"`)
  return {
    command: 'usage',
    ...(values.since !== undefined ? { since: sinceTime(values.since, now), sinceText: values.since } : {}),
    by: by as Grouping,
    ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
    allWorkspaces: !!values['all-workspaces'],
    json: !!values.json,
  }
}

/** `7d` and `24h` count back from now; `2026-11-01` is that day's start in UTC. */
export function sinceTime(text: string, now: number): number {
  const relative = /^(\d+)([dh])$/.exec(text)
  if (relative) return now - Number(relative[1]) * (relative[2] === 'd' ? 24 : 1) * HOUR_MS
  if (/^\d{4}-\d\d-\d\d$/.test(text)) {
    const time = Date.parse(`${text}T00:00:00Z`)
    if (Number.isFinite(time) && new Date(time).toISOString().startsWith(text)) return time
  }
  throw new UsageError(`--since must be a number of days or hours back (7d, 24h) or a date (2026-11-01), got "${text}"`)
}
