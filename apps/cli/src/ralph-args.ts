// The command line of `dsh ralph` (docs/ralph.md): its flags, its help and their checks.
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { LauncherUsageError } from './args.ts'

const DEFAULT_MAX_ITERATIONS = 10
const DEFAULT_CHECK_TIMEOUT_SECONDS = 300

export interface RalphArgs {
  prompt: string
  until: string
  maxIterations: number
  budgetTokens?: number
  budgetUsd?: number
  checkTimeoutSeconds: number
  unconfinedCheck: boolean
  json: boolean
  quiet: boolean
  cwd: string
  /** Flags every iteration's `dsh` gets as given (approval, permission and agent presets, route, step limit). */
  runFlags: string[]
}

/** Flags with a value passed to every iteration's dsh as given. */
const PASSED_VALUE_FLAGS = new Set([
  '--permission',
  '--preset',
  '--provider',
  '--model',
  '--effort',
  '--max-steps',
  '--max-turns',
  '--mcp-config',
])
/** Every flag that takes a value: ralph's own and the passed ones. */
const VALUE_FLAGS = new Set([
  '--until',
  '--max-iterations',
  '--budget-tokens',
  '--budget-usd',
  '--check-timeout',
  '--cwd',
  ...PASSED_VALUE_FLAGS,
])

export const RALPH_HELP = `dsh ralph — run a prompt as one headless session after another until a check passes

Usage:
  dsh ralph "<prompt>" --until "<command>" [options]

Each iteration is a new stored session (\`dsh --json\` in this folder) given the prompt and, from the second
on, a note saying which iteration it is and how the check failed (its exit code and the tail of its output).
After each iteration the completion command runs under bash, confined: bubblewrap (Seatbelt on macOS) with the
workspace writable, the rest of the disk (your home folder too) read-only, secret paths hidden, no network, a
private writable /tmp and the scrubbed environment of every command dsh runs. Exit 0 passes (docs/ralph.md).

Options:
  --until "<command>"      the completion check (required)
  --max-iterations <n>     stop after n iterations (default ${DEFAULT_MAX_ITERATIONS})
  --budget-tokens <n>      stop once the iterations' tokens (input, cache, output) sum to n or more
  --budget-usd <amount>    stop once their cost (the usage.prices setting) sums to amount or more; an
                           iteration on an unpriced model stops the loop (its cost cannot be counted)
  --check-timeout <s>      kill the check's whole process group after s seconds; it then counts as failed
                           (default ${DEFAULT_CHECK_TIMEOUT_SECONDS})
  --unconfined-check       run the check without the sandbox, as your own command (also when no sandbox
                           backend works; without this flag the loop then refuses to start)
  --cwd <dir>              the workspace (default: where dsh starts)
  --json                   print one JSON result line at the end (stop reason, iterations, sessions, tokens)
  -q, --quiet              no progress lines on stderr
  Given to every iteration: --approve, --permission <preset>, --preset <name>, --provider <name>,
  --model <id>, --effort <level>, --max-steps <n> (or --max-turns <n>), --mcp-config <file>, --patch <file|name>

The run record: $DSH_HOME/ralph/<run-id>.json, rewritten after every iteration (prompt, command, each
iteration's session, tokens, check exit code and timing, the stop reason). Each session is titled
"ralph <run-id> #<n>: <prompt>" (dsh sessions list shows it).

Exit codes:
  0    the check passed
  1    it did not: --max-iterations or a budget reached, or an iteration could not run
  2    bad usage (a missing --until, a bad number, an unknown flag; also an iteration's own usage error)
  3    the check cannot be confined here (no working bubblewrap or Seatbelt) and --unconfined-check was not given
  130  interrupted by SIGINT (143: SIGTERM); the record says "interrupted"

Examples:
  dsh ralph "make the test suite pass" --until "npm test" --approve --max-iterations 5
  dsh ralph "port the parser to the new API" --until "make check" --budget-tokens 2000000 --json
`

const usage = (message: string) => new LauncherUsageError(`dsh ralph: ${message} (see dsh ralph --help)`)

function wholeNumber(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw usage(`${flag} must be a whole number ≥ 1, got "${text}"`)
  return Number(text)
}

/** Reads `dsh ralph …` (`rest[0]` is `ralph`); every mistake is a usage error naming the flag. */
export function parseRalphArgs(rest: string[], cwd: string, patches: string[]): RalphArgs {
  const words: string[] = []
  const runFlags: string[] = []
  const values = new Map<string, string>()
  let unconfinedCheck = false
  let json = false
  let quiet = false
  for (let i = 1; i < rest.length; i++) {
    const arg = rest[i]!
    if (arg === '--') {
      words.push(...rest.slice(i + 1))
      break
    }
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg]
    if (VALUE_FLAGS.has(flag!)) {
      const value = inline ?? rest[++i]
      if (value === undefined || (inline === undefined && value.startsWith('--'))) throw usage(`${flag} needs a value`)
      if (values.has(flag!)) throw usage(`${flag} given twice`)
      values.set(flag!, value)
      if (PASSED_VALUE_FLAGS.has(flag!)) runFlags.push(flag!, value)
    } else if (arg === '--approve') runFlags.push(arg)
    else if (arg === '--unconfined-check') unconfinedCheck = true
    else if (arg === '--json') json = true
    else if (arg === '--quiet' || arg === '-q') quiet = true
    else if (arg.startsWith('-')) throw usage(`unknown flag "${arg}"`)
    else words.push(arg)
  }
  const prompt = words.join(' ').trim()
  if (!prompt) throw usage('give the prompt (dsh ralph "<prompt>" --until "<command>")')
  const until = values.get('--until')
  if (until === undefined) throw usage('--until "<command>" is required: the check that ends the loop when it exits 0')
  if (!until.trim()) throw usage('--until needs a command, got an empty one')
  const timeout = values.get('--check-timeout')
  let checkTimeoutSeconds = DEFAULT_CHECK_TIMEOUT_SECONDS
  if (timeout !== undefined) {
    checkTimeoutSeconds = Number(timeout)
    if (!/^\d+(\.\d+)?$/.test(timeout) || !(checkTimeoutSeconds > 0))
      throw usage(`--check-timeout must be a number of seconds > 0, got "${timeout}"`)
  }
  if (values.has('--max-steps')) wholeNumber('--max-steps', values.get('--max-steps')!)
  if (values.has('--max-turns')) wholeNumber('--max-turns', values.get('--max-turns')!)
  if (values.has('--max-steps') && values.has('--max-turns'))
    throw usage('--max-steps and --max-turns are the same limit: give one')
  const dir = resolve(cwd, values.get('--cwd') ?? '.')
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw usage(`--cwd ${dir} is not a folder`)
  const budget = values.get('--budget-tokens')
  const usd = values.get('--budget-usd')
  if (usd !== undefined && (!/^\d+(\.\d+)?$/.test(usd) || !(Number(usd) > 0)))
    throw usage(`--budget-usd must be an amount of dollars > 0, got "${usd}"`)
  return {
    prompt,
    until,
    maxIterations: values.has('--max-iterations')
      ? wholeNumber('--max-iterations', values.get('--max-iterations')!)
      : DEFAULT_MAX_ITERATIONS,
    ...(budget !== undefined ? { budgetTokens: wholeNumber('--budget-tokens', budget) } : {}),
    ...(usd !== undefined ? { budgetUsd: Number(usd) } : {}),
    checkTimeoutSeconds,
    unconfinedCheck,
    json,
    quiet,
    cwd: dir,
    runFlags: [...patches.flatMap((patch) => ['--patch', patch]), ...runFlags],
  }
}
