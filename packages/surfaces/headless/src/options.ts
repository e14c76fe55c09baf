import { UsageError, type OptionSpec, type ParsedArgs } from '@dsh/cmdline'
import { EFFORTS, type Effort } from '@dsh/llm'
import { readUsageCommand, USAGE_OPTIONS, type UsageInvocation } from './usage-options.ts'
import {
  readSearchCommand,
  REINDEX_OPTIONS,
  SEARCH_OPTIONS,
  type ReindexInvocation,
  type SearchInvocation,
} from './search-options.ts'
import { MCP_ADD_OPTIONS, readMcpAdd, type McpAddInvocation } from './mcp-options.ts'
import {
  DELETE_OPTIONS,
  EXPORT_OPTIONS,
  readArchiveCommand,
  readDeleteCommand,
  readManageCommand,
  type ArchiveInvocation,
  type DeleteInvocation,
  type RenameInvocation,
  type TransferInvocation,
} from './manage-options.ts'
import {
  DIFF_OPTIONS,
  readDiffCommand,
  readRewindCommand,
  type DiffInvocation,
  type RewindInvocation,
} from './review-options.ts'

/** Flags of a headless run (`dsh "task"`, `dsh resume <id> "more"`, `dsh fork <id> --at <seq> "task"`). */
export const RUN_OPTIONS = {
  json: { type: 'boolean' },
  approve: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  provider: { type: 'string' },
  model: { type: 'string' },
  effort: { type: 'string' },
  permission: { type: 'string' },
  preset: { type: 'string' },
  plan: { type: 'boolean' },
  'max-steps': { type: 'string' },
  'max-turns': { type: 'string' },
  'output-schema': { type: 'string' },
  resume: { type: 'string' },
  fork: { type: 'string' },
  at: { type: 'string' },
  cwd: { type: 'string' },
  'mcp-config': { type: 'string' },
} as const satisfies OptionSpec

const LIST_OPTIONS = {
  cwd: { type: 'string' },
  all: { type: 'boolean' },
  archived: { type: 'boolean' },
  json: { type: 'boolean' },
} as const satisfies OptionSpec
const SHOW_OPTIONS = { audit: { type: 'boolean' }, json: { type: 'boolean' } } as const satisfies OptionSpec
const GRANTS_LIST_OPTIONS = { cwd: { type: 'string' }, json: { type: 'boolean' } } as const satisfies OptionSpec
const GRANTS_REVOKE_OPTIONS = { cwd: { type: 'string' } } as const satisfies OptionSpec
const MCP_LIST_OPTIONS = { cwd: { type: 'string' }, json: { type: 'boolean' } } as const satisfies OptionSpec
const MCP_TEST_OPTIONS = MCP_LIST_OPTIONS

/** Every flag any headless command knows: the first, lenient pass that finds the command word. */
const ALL_OPTIONS = {
  ...RUN_OPTIONS,
  ...LIST_OPTIONS,
  ...SHOW_OPTIONS,
  ...SEARCH_OPTIONS,
  ...REINDEX_OPTIONS,
  ...GRANTS_LIST_OPTIONS,
  ...GRANTS_REVOKE_OPTIONS,
  ...USAGE_OPTIONS,
  ...DIFF_OPTIONS,
  ...MCP_ADD_OPTIONS,
  ...DELETE_OPTIONS,
  ...EXPORT_OPTIONS,
} as const satisfies OptionSpec

/** Where a run's session comes from. */
export type SessionSource =
  { kind: 'new'; cwd?: string } | { kind: 'resume'; id: string } | { kind: 'fork'; id: string; atSeq: number }

export interface RunInvocation {
  command: 'run'
  /** The task; absent means "read it from stdin". */
  task?: string
  source: SessionSource
  json: boolean
  approve: boolean
  quiet: boolean
  route: { provider?: string; model?: string; effort?: Effort }
  permission?: string
  /** `--preset <name>`: the agent preset of a new session (not a permission preset). */
  agentPreset?: string
  /** `--plan`: start in plan mode. */
  plan?: boolean
  maxSteps?: number
  /** `--output-schema <file>` as given (read and compiled when the run starts). */
  outputSchema?: string
  /** `--mcp-config <file>`: MCP servers for this run's session. */
  mcpConfig?: string
}

export interface ListInvocation {
  command: 'sessions-list'
  cwd?: string
  all: boolean
  /** Archived sessions are listed too. */
  archived: boolean
  json: boolean
}

export interface ShowInvocation {
  command: 'sessions-show'
  id: string
  audit: boolean
  json: boolean
}

export interface GrantsListInvocation {
  command: 'grants-list'
  cwd?: string
  json: boolean
}

export interface GrantsRevokeInvocation {
  command: 'grants-revoke'
  /** A grant id (`g-…`) or a rule as written (`unconfined(npm test *)`). */
  target: string
  cwd?: string
}

export interface McpListInvocation {
  command: 'mcp-list'
  cwd?: string
  json: boolean
}

export interface McpRemoveInvocation {
  command: 'mcp-remove'
  name: string
}

export interface McpTestInvocation {
  command: 'mcp-test'
  name: string
  cwd?: string
  json: boolean
}

export type Invocation =
  | RunInvocation
  | ListInvocation
  | ShowInvocation
  | SearchInvocation
  | ReindexInvocation
  | GrantsListInvocation
  | GrantsRevokeInvocation
  | UsageInvocation
  | McpListInvocation
  | McpAddInvocation
  | McpRemoveInvocation
  | McpTestInvocation
  | DiffInvocation
  | RewindInvocation
  | RenameInvocation
  | ArchiveInvocation
  | DeleteInvocation
  | TransferInvocation

type Parser = <T extends OptionSpec>(options: T, argv?: readonly string[]) => ParsedArgs<T>

/**
 * Reads the tree's arguments into one invocation. `parse` is `ctx.cmdlineArgs.parse` (strict: an unknown
 * flag throws UsageError naming it). Command words (`sessions`, `resume`, `fork`, `grants`, `usage`) are the first positional;
 * each command then accepts only its own flags.
 */
export function readInvocation(argv: readonly string[], parse: Parser, now = Date.now()): Invocation {
  if (argv[0] === 'rewind') return readRewindCommand(argv, parse)
  const [word, ...rest] = parse(ALL_OPTIONS, argv).positionals
  if (word === 'sessions') return readSessions(rest, argv, parse)
  if (word === 'grants') return readGrants(rest, argv, parse)
  if (word === 'usage') return readUsageCommand(rest, argv, parse, now)
  if (word === 'mcp') return readMcp(rest, argv, parse)
  const { values, positionals } = parse(RUN_OPTIONS, argv)
  let source: SessionSource
  let words = positionals
  if (word === 'resume' || word === 'fork') {
    const id = positionals[1]
    if (id === undefined)
      throw new UsageError(
        `${word} needs a session id (dsh ${word === 'resume' ? 'resume <id> "more"' : 'fork <id> --at <seq> "task"'})`,
      )
    if (values.resume !== undefined || values.fork !== undefined)
      throw new UsageError(`dsh ${word} <id> takes no --resume or --fork`)
    words = positionals.slice(2)
    source = word === 'resume' ? { kind: 'resume', id } : { kind: 'fork', id, atSeq: forkSeq(values.at) }
  } else if (values.resume !== undefined) {
    if (values.fork !== undefined) throw new UsageError('--resume and --fork cannot be combined')
    source = { kind: 'resume', id: values.resume }
  } else if (values.fork !== undefined) {
    source = { kind: 'fork', id: values.fork, atSeq: forkSeq(values.at) }
  } else {
    source = { kind: 'new', ...(values.cwd !== undefined ? { cwd: values.cwd } : {}) }
  }
  if (source.kind !== 'fork' && values.at !== undefined)
    throw new UsageError('--at only goes with --fork <id> (or dsh fork <id> --at <seq>)')
  if (source.kind !== 'new' && values.preset !== undefined)
    throw new UsageError(
      `--preset cannot be combined with ${source.kind}: a session keeps the agent preset it was created with`,
    )
  if (source.kind !== 'new' && values.cwd !== undefined)
    throw new UsageError(
      `--cwd cannot be combined with ${source.kind}: a session keeps the directory it was created in`,
    )
  const task = words.join(' ').trim()
  return {
    command: 'run',
    ...(words.length ? { task } : {}),
    source,
    json: !!values.json,
    approve: !!values.approve,
    quiet: !!values.quiet,
    route: {
      ...(values.provider !== undefined ? { provider: nonEmpty('--provider', values.provider) } : {}),
      ...(values.model !== undefined ? { model: nonEmpty('--model', values.model) } : {}),
      ...(values.effort !== undefined ? { effort: effort(values.effort) } : {}),
    },
    ...(values.permission !== undefined ? { permission: nonEmpty('--permission', values.permission) } : {}),
    ...(values.preset !== undefined ? { agentPreset: nonEmpty('--preset', values.preset) } : {}),
    ...(values.plan ? { plan: true } : {}),
    ...maxSteps(values['max-steps'], values['max-turns']),
    ...(values['output-schema'] !== undefined
      ? { outputSchema: nonEmpty('--output-schema', values['output-schema']) }
      : {}),
    ...(values['mcp-config'] !== undefined ? { mcpConfig: nonEmpty('--mcp-config', values['mcp-config']) } : {}),
  }
}

function readSessions(rest: string[], argv: readonly string[], parse: Parser): Invocation {
  const [sub = 'list', ...more] = rest
  if (sub === 'list') {
    const { values } = parse(LIST_OPTIONS, argv)
    if (more.length) throw new UsageError(`dsh sessions list takes no arguments (got "${more.join(' ')}")`)
    return {
      command: 'sessions-list',
      ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
      all: !!values.all,
      archived: !!values.archived,
      json: !!values.json,
    }
  }
  if (sub === 'show') {
    const { values } = parse(SHOW_OPTIONS, argv)
    const [id, ...extra] = more
    if (id === undefined) throw new UsageError('dsh sessions show needs a session id (see dsh sessions list)')
    if (extra.length) throw new UsageError(`dsh sessions show takes one session id (got "${more.join(' ')}")`)
    return { command: 'sessions-show', id, audit: !!values.audit, json: !!values.json }
  }
  if (sub === 'search' || sub === 'reindex') return readSearchCommand(sub, more, argv, parse)
  if (sub === 'diff') return readDiffCommand(more, argv, parse)
  if (sub === 'rename' || sub === 'archive' || sub === 'unarchive') return readManageCommand(sub, more, argv, parse)
  if (sub === 'delete') return readDeleteCommand(more, argv, parse)
  if (sub === 'export' || sub === 'import') return readArchiveCommand(sub, more, argv, parse)
  throw new UsageError(
    `unknown sessions command "${sub}" (expected list, show, diff, search, reindex, rename, archive, unarchive, delete, export or import)`,
  )
}

function readGrants(rest: string[], argv: readonly string[], parse: Parser): Invocation {
  const [sub = 'list', ...more] = rest
  if (sub === 'list') {
    const { values } = parse(GRANTS_LIST_OPTIONS, argv)
    if (more.length) throw new UsageError(`dsh grants list takes no arguments (got "${more.join(' ')}")`)
    return { command: 'grants-list', ...(values.cwd !== undefined ? { cwd: values.cwd } : {}), json: !!values.json }
  }
  if (sub === 'revoke') {
    const { values } = parse(GRANTS_REVOKE_OPTIONS, argv)
    // A rule has spaces (`npm test *`): the words after revoke are one target, quoted or not.
    const target = more.join(' ').trim()
    if (!target) throw new UsageError('dsh grants revoke needs a grant id or a rule (see dsh grants list)')
    return { command: 'grants-revoke', target, ...(values.cwd !== undefined ? { cwd: values.cwd } : {}) }
  }
  throw new UsageError(`unknown grants command "${sub}" (expected list or revoke)`)
}

function readMcp(rest: string[], argv: readonly string[], parse: Parser): Invocation {
  const [sub = 'list', ...more] = rest
  if (sub === 'add') return readMcpAdd(more, argv, parse)
  if (sub === 'remove' || sub === 'test') {
    const [name, ...extra] = more
    if (name === undefined || extra.length)
      throw new UsageError(`dsh mcp ${sub} takes one server name (see dsh mcp list)`)
    if (sub === 'remove') return (parse({}, argv), { command: 'mcp-remove', name })
    const { values } = parse(MCP_TEST_OPTIONS, argv)
    return { command: 'mcp-test', name, ...(values.cwd !== undefined ? { cwd: values.cwd } : {}), json: !!values.json }
  }
  if (sub !== 'list') throw new UsageError(`unknown mcp command "${sub}" (expected list, add, remove or test)`)
  const { values } = parse(MCP_LIST_OPTIONS, argv)
  if (more.length) throw new UsageError(`dsh mcp list takes no arguments (got "${more.join(' ')}")`)
  return { command: 'mcp-list', ...(values.cwd !== undefined ? { cwd: values.cwd } : {}), json: !!values.json }
}

function forkSeq(at: string | undefined): number {
  if (at === undefined)
    throw new UsageError('a fork needs --at <seq>: the last event it keeps (see dsh sessions show <id>)')
  if (!/^\d+$/.test(at)) throw new UsageError(`--at must be an event number (a whole number ≥ 0), got "${at}"`)
  return Number(at)
}

/** `--max-turns` is the same limit under the name other harnesses use for it (model round trips). */
function maxSteps(steps: string | undefined, turns: string | undefined): { maxSteps?: number } {
  if (steps !== undefined && turns !== undefined)
    throw new UsageError('--max-steps and --max-turns are the same limit: give one')
  if (steps !== undefined) return { maxSteps: positiveInteger('--max-steps', steps) }
  if (turns !== undefined) return { maxSteps: positiveInteger('--max-turns', turns) }
  return {}
}

function positiveInteger(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${flag} must be a whole number ≥ 1, got "${text}"`)
  return Number(text)
}

function effort(text: string): Effort {
  if (!(EFFORTS as readonly string[]).includes(text))
    throw new UsageError(`--effort must be one of ${EFFORTS.join(', ')}, got "${text}"`)
  return text as Effort
}

function nonEmpty(flag: string, text: string): string {
  if (!text.trim()) throw new UsageError(`${flag} needs a value`)
  return text
}
