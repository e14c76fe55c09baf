/** What the launcher itself understands; everything else belongs to the tree (`ctx.cmdlineArgs`). */
export interface LauncherArgs {
  profile?: string
  patches: string[]
  dumpConfig: boolean
  check: boolean
  version: boolean
  help: boolean
  /** Arguments passed through to the tree, in order. */
  rest: string[]
}

export class LauncherUsageError extends Error {}

const PROFILE_ALIASES = new Set(['web', 'headless', 'sdk', 'acp'])

/**
 * Commands a profile's surface implements: as the first argument they choose that profile and, unlike a
 * profile alias, stay in the tree's arguments (`dsh resume <id> "more"` is `dsh --profile headless resume <id>
 * "more"`; the headless surface reads the command word).
 */
const COMMAND_PROFILES: Record<string, string> = { sessions: 'headless', resume: 'headless', fork: 'headless', grants: 'headless', usage: 'headless' }

/**
 * Takes the launcher's options from anywhere before `--`; `dsh web` (a profile name as the first argument)
 * is `dsh --profile web`, and a command word (`dsh sessions list`) picks its profile. Unknown flags are left
 * for the tree, which rejects them itself.
 */
export function parseLauncherArgs(argv: string[]): LauncherArgs {
  const out: LauncherArgs = { patches: [], dumpConfig: false, check: false, version: false, help: false, rest: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      out.rest.push(...argv.slice(i))
      break
    }
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = (): string => {
      if (inline !== undefined) return inline
      const next = argv[++i]
      if (next === undefined || next.startsWith('--')) throw new LauncherUsageError(`${flag} needs a value`)
      return next
    }
    switch (flag) {
      case '--profile':
        if (out.profile) throw new LauncherUsageError(`--profile given twice (${out.profile} and more)`)
        out.profile = value()
        break
      case '--patch':
        out.patches.push(value())
        break
      case '--dump-config':
        out.dumpConfig = true
        break
      case '--check':
        out.check = true
        break
      case '--version':
      case '-v':
        out.version = true
        break
      case '--help':
      case '-h':
        out.help = true
        break
      default:
        if (i === 0 && !out.profile && PROFILE_ALIASES.has(arg)) out.profile = arg
        else {
          if (i === 0 && Object.hasOwn(COMMAND_PROFILES, arg)) out.profile = COMMAND_PROFILES[arg]
          out.rest.push(arg)
        }
    }
  }
  return out
}

export const HELP = `dsh — a local-first coding-agent harness

Usage:
  dsh web                              open the browser app (same as --profile web)
  dsh --profile headless "task"        run one task for scripts and CI (also: dsh "task")
  dsh sessions list | show <id>        list this directory's sessions, show one (--audit, --json)
  dsh sessions search "words"          full-text search of stored sessions (--all-workspaces, --json); reindex rebuilds it
  dsh resume <id> "more"               continue a session headless (same as --resume <id>)
  dsh fork <id> --at <seq> "task"      branch a session at an event (same as --fork <id> --at <seq>)
  dsh grants list | revoke <id|rule>   this directory's standing grants and permission rules (--cwd, --json)
  dsh usage                            tokens and cost of this directory's sessions (--since 7d, --by model|workspace|day, --json, --all-workspaces)
  dsh --profile sdk | dsh acp          serve JSON-RPC (SDKs) or ACP (editors) on stdio
  dsh eval <dir>                       run task folders (task.json + repo/) headless in temp copies; table + --out report.json (--parallel n)
  dsh prompt show                      the system prompt and tool schemas a request carries, each section with its owner and tokens (--profile, --patch, --preset, --json)

Launcher options (everything else is passed to the profile's plugins):
  --profile <name>      web | headless | sdk | acp (default: headless)
  --patch <file|name>   add a patch layer (repeatable; a bare name picks a patch a bundle ships)
  --dump-config         print the composed plugin tree as YAML, with the layers that set each row; no boot
  --check               boot the tree, list its rows and their state, and exit
  --version, --help

Environment:
  DSH_HOME              the harness home (default ~/.dsh): profiles/, cordis.patch.yml, sessions/, …
  DSH_DRAIN_TIMEOUT_MS  how long shutting the tree down may take before dsh exits anyway (10000)
`
