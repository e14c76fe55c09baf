/** What the launcher itself understands; everything else belongs to the tree (`ctx.cmdlineArgs`). */
export interface LauncherArgs {
  profile?: string
  /** The profile was chosen by a command word (`dsh resume …`), not named. */
  profileByCommand?: boolean
  patches: string[]
  dumpConfig: boolean
  check: boolean
  version: boolean
  help: boolean
  /** Arguments passed through to the tree, in order. */
  rest: string[]
}

export class LauncherUsageError extends Error {}

const PROFILE_ALIASES = new Set(['tui', 'web', 'headless', 'sdk', 'acp'])

/**
 * Commands a profile's surface implements: as the first argument they choose that profile and, unlike a
 * profile alias, stay in the tree's arguments (`dsh resume <id> "more"` is `dsh --profile headless resume <id>
 * "more"`; the headless surface reads the command word).
 */
const COMMAND_PROFILES: Record<string, string> = {
  sessions: 'headless',
  resume: 'headless',
  fork: 'headless',
  grants: 'headless',
  usage: 'headless',
  mcp: 'headless',
  rewind: 'headless',
}

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
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined]
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
        // `dsh help` is the help, not a task for the model named "help".
        if (i === 0 && arg === 'help') out.help = true
        else if (i === 0 && !out.profile && PROFILE_ALIASES.has(arg)) out.profile = arg
        else {
          if (i === 0 && Object.hasOwn(COMMAND_PROFILES, arg)) {
            out.profile = COMMAND_PROFILES[arg]
            out.profileByCommand = true
          }
          out.rest.push(arg)
        }
    }
  }
  return out
}

export const HELP = `dsh — a local-first coding-agent harness

Usage:
  dsh                                  on a terminal: the terminal UI in this folder (= dsh tui)
  dsh tui ["first message"]            the terminal UI (--plain: plain lines, for screen readers and dumb terminals)
  dsh resume                           on a terminal, with no id: pick a stored session of this folder in the terminal UI
  dsh "task"                           run one task headless, for scripts and CI (= dsh --profile headless "task")
  echo "task" | dsh                    the task on stdin when no argument gives one
  dsh web                              open the browser app (same as --profile web)
  dsh acp                              serve the Agent Client Protocol on stdio (editors)
  dsh --profile sdk                    serve JSON-RPC on stdio (the Python and TypeScript SDKs)
  dsh resume <id> "more"               continue a session headless (same as --resume <id>)
  dsh fork <id> --at <seq> "task"      branch a session after event <seq> (same as --fork <id> --at <seq>)
  dsh sessions list | show <id>        this directory's sessions (--all, --cwd <dir>, --json); show: --audit, --json
  dsh sessions search "words"          full-text search of stored sessions (--all-workspaces, --cwd, --limit n, --json)
  dsh sessions reindex                 rebuild the search index from the logs
  dsh sessions rename <id> "title"     name a session (archive | unarchive <id>: hide it from the list or not)
  dsh sessions delete <id> [--yes]     delete it with its subagent sessions and files (asks on a terminal)
  dsh sessions export <id> -o <file>   write it with its children, attachments and spills to a .tar.gz
  dsh sessions import <file>           unpack such an archive here (run it from the session's workspace)
  dsh sessions diff <id> [--turn N]    the files a session changed, with diffs (since it started, or turn N)
  dsh rewind <id> --to-turn N          restore the files a session touched to before turn N (--preview, --force, --fork)
  dsh grants list | revoke <id|rule>   this directory's standing grants and permission rules (--cwd, --json)
  dsh mcp list                         MCP servers of this directory and where each comes from (--cwd, --json)
  dsh mcp add <name> -- <cmd> [args…]  add a server to $DSH_HOME/mcp.yaml (--env K=V, --trust ask|allow,
                                       --start eager|lazy, --unconfined; remote: --url <url> [--transport http|sse]
                                       [--header "Name: value"] [--bearer-token-env-var VAR])
  dsh mcp remove <name>                remove it from $DSH_HOME/mcp.yaml
  dsh mcp test <name>                  start it as a session would, list its tools, stop it, with timings
                                       (--cwd, --json; exit 0 started, 1 did not start, 2 unknown name or bad file)
  dsh plugins add <pkg>[@v] | <f.tgz>  install a plugin from npm into $DSH_HOME/plugins (exact version, no install
                                       scripts) and add its row to $DSH_HOME/cordis.patch.yml; mounted at the next start
  dsh plugins list | remove <name>     installed plugins and their rows (--json); remove: rows and package
  dsh plugins update <name>[@version]  another version of an installed plugin (or: update <name> <file.tgz>)
  dsh usage                            tokens and cost of stored sessions (--since 7d|24h|<date>, --by model|workspace|day, --all-workspaces, --json)
  dsh prompt show                      the system prompt and tool schemas a request carries, each section with its owner and tokens (--profile, --patch, --permission, --preset, --json)
  dsh eval <dir>                       run task folders (task.json + repo/) headless in temp copies; table + --out report.json (--parallel n)
  dsh ralph "task" --until "<cmd>"     run the task as one headless session after another until <cmd>, confined,
                                       exits 0 (--max-iterations n, --budget-tokens n, --check-timeout s; dsh ralph --help)
  dsh help                             this text (same as --help)

Headless run options:
  --json                 one JSON line per session event, then a final {"type":"result",…} line
                         (schema: docs/headless-lines.schema.json)
  --output-schema <file> the final answer must be JSON valid against this JSON Schema (one retry;
                         the result line carries structuredOutput; exit 1 if it never validates)
  --approve              answer every approval "allow once" (without it, approvals are refused)
  --permission <preset>  permission preset: read-only | workspace-write | danger-full-access
  --preset <name>        agent preset of a new session: standard | explore | minimal | $DSH_HOME/presets/<name>.yaml
  --plan                 start in plan mode (only reading runs until you approve the plan)
  --provider <name>      deepseek | anthropic | openai (alone: that provider's first model)
  --model <id>           the model of the route       --effort off|low|high|max
  --max-steps <n>        each turn of this run stops after n steps (model requests), in place of the
                         agent.maxSteps setting (default 100), higher or lower
  --max-turns <n>        the same per-turn step limit under the name other harnesses use (give one)
  --mcp-config <file>    MCP servers for this run (the .mcp.json format; yours, so no approval needed)
  --cwd <dir>            the directory a new session works in (default: where dsh starts)
  --resume <id>          continue a stored session    --fork <id> --at <seq>  branch one
  -q, --quiet            no progress or refusal lines on stderr

Launcher options (everything else is passed to the profile's plugins):
  --profile <name>       tui | web | headless | sdk | acp (default: tui alone on a terminal, else headless)
  --patch <file|name>    add a patch layer (repeatable; a bare name picks a patch a bundle ships)
  --dump-config          print the composed plugin tree as YAML, with the layers that set each row; no boot
  --check                boot the tree, list its rows and their state, and exit
  -v, --version          the version         -h, --help   this text

Exit codes:
  0    the task completed (and, with --output-schema, its answer validated)
  1    it did not: a model error, max steps, an approval refused, an answer that never validated, a failed boot
  2    bad usage: an unknown flag or setting, no task, an unknown session, preset or provider, a bad patch
  130  interrupted by SIGINT (143: SIGTERM); the session is saved and can be resumed

Environment:
  DSH_HOME               the harness home (default ~/.dsh): settings.yaml, sessions/, grants.yaml, profiles/, …
  DEEPSEEK_API_KEY       keys of the model providers (also ANTHROPIC_API_KEY, OPENAI_API_KEY); kept out of every
                         command's environment and redacted from tool output
  DEEPSEEK_BASE_URL      another endpoint for a provider (also ANTHROPIC_BASE_URL, OPENAI_BASE_URL)
  DSH_DRAIN_TIMEOUT_MS   how long shutting the tree down may take before dsh exits anyway (10000)

Examples:
  dsh "fix the failing test in src/parse.test.ts"
  dsh --json --approve --max-steps 40 "update the changelog" | tail -n 1
  dsh --output-schema answer.schema.json --json "list the files that import lodash"
  dsh sessions search "EADDRINUSE" --all-workspaces
  dsh resume 0mx2f96ba-a347b975f8 "now add a test"
`
