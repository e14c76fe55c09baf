import { UsageError, type OptionSpec, type ParsedArgs } from '@dsh/cmdline'

/** Flags of `dsh mcp add <name> [flags] -- <command> [args…]` or `dsh mcp add <name> --url <url> [flags]`. */
export const MCP_ADD_OPTIONS = {
  url: { type: 'string' },
  transport: { type: 'string' },
  env: { type: 'string', multiple: true },
  header: { type: 'string', multiple: true },
  'bearer-token-env-var': { type: 'string' },
  trust: { type: 'string' },
  start: { type: 'string' },
  unconfined: { type: 'boolean' },
} as const satisfies OptionSpec

export interface McpAddInvocation {
  command: 'mcp-add'
  name: string
  /** The entry as `$DSH_HOME/mcp.yaml` holds it (validated by ctx.mcp before it is written). */
  entry: Record<string, unknown>
}

type Parser = <T extends OptionSpec>(options: T, argv?: readonly string[]) => ParsedArgs<T>

/** `NAME=value` (env) or `Name: value` (header) pairs, each checked so a typo is named rather than written. */
function pairs(list: string[] | undefined, flag: string, separator: '=' | ':'): Record<string, string> | undefined {
  if (!list?.length) return undefined
  const out: Record<string, string> = {}
  for (const item of list) {
    const cut = item.indexOf(separator)
    const key = cut > 0 ? item.slice(0, cut).trim() : ''
    if (!key) throw new UsageError(`${flag} "${item}" must be ${separator === '=' ? 'NAME=value' : '"Name: value"'}`)
    out[key] = item.slice(cut + 1).trim()
  }
  return out
}

/** The entry a `dsh mcp add` writes: a stdio command (the words after the name), or a remote `--url`. */
export function readMcpAdd(words: string[], argv: readonly string[], parse: Parser): McpAddInvocation {
  const { values } = parse(MCP_ADD_OPTIONS, argv)
  const [name, ...command] = words
  if (name === undefined)
    throw new UsageError(
      'dsh mcp add needs a server name: dsh mcp add <name> -- <command> [args…] or dsh mcp add <name> --url <url>',
    )
  const common = {
    ...(values.trust !== undefined ? { trust: values.trust } : {}),
    ...(values.start !== undefined ? { start: values.start } : {}),
  }
  if (values.url !== undefined) {
    if (command.length) throw new UsageError(`dsh mcp add ${name} --url takes no command (got "${command.join(' ')}")`)
    if (values.env?.length || values.unconfined)
      throw new UsageError('--env and --unconfined are for stdio servers (a command), not --url')
    const headers = pairs(values.header, '--header', ':')
    const bearer = values['bearer-token-env-var']
    return {
      command: 'mcp-add',
      name,
      entry: {
        type: values.transport ?? 'http',
        url: values.url,
        ...(headers ? { headers } : {}),
        ...(bearer !== undefined ? { bearer_token_env_var: bearer } : {}),
        ...common,
      },
    }
  }
  if (!command.length) throw new UsageError(`dsh mcp add ${name} needs the server's command (after --) or --url <url>`)
  if (values.header?.length || values['bearer-token-env-var'] !== undefined)
    throw new UsageError('--header and --bearer-token-env-var are for remote servers (--url)')
  if (values.transport !== undefined && values.transport !== 'stdio')
    throw new UsageError(`--transport ${values.transport} needs --url <url>`)
  const env = pairs(values.env, '--env', '=')
  const [program, ...args] = command as [string, ...string[]]
  return {
    command: 'mcp-add',
    name,
    entry: {
      command: program,
      args,
      ...(env ? { env } : {}),
      ...common,
      ...(values.unconfined ? { sandbox: false } : {}),
    },
  }
}
