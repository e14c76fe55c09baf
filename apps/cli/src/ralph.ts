// `dsh ralph "<prompt>" --until "<command>"`: runs the prompt as one headless dsh session after another until a
// completion command passes (docs/ralph.md). Each iteration is a separate `dsh --json` process and a stored
// session; the check runs confined through the booted tree's own sandbox seam.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { BootError, bootTree, CompositionError, type BootedTree } from '@dsh/app-boot'
import type { Credentials } from '@dsh/credentials'
import type { ResultLine } from '@dsh/headless-lines'
import type { Sandbox, SandboxAuthority } from '@dsh/sandbox'
import type { SandboxPolicy } from '@dsh/sandbox-policy'
import type { SessionAdmin } from '@dsh/session-admin'
import type { RunResult, Subprocess } from '@dsh/subprocess'
import { LauncherUsageError } from './args.ts'

const DEFAULT_MAX_ITERATIONS = 10
const DEFAULT_CHECK_TIMEOUT_SECONDS = 300
/** Characters of the check's output (its tail) kept in the record and told to the next iteration. */
const OUTPUT_TAIL_CHARS = 2_000
/** Bytes of the check's output `ctx.subprocess` keeps (head and tail) before the tail above is cut from it. */
const CHECK_OUTPUT_CAP_BYTES = 64_000
/** Longest title given to an iteration's session (`ralph <run-id> #<n>: <the prompt's head>`). */
const TITLE_CHARS = 120
/** Version of the run record's shape, bumped when a key is removed or changes meaning. */
const RECORD_VERSION = 1

/** Exit codes of `dsh ralph` (docs/ralph.md). */
export const RALPH_EXIT = {
  passed: 0,
  /** The loop stopped without a pass: --max-iterations, a budget, or an iteration that could not run. */
  notPassed: 1,
  usage: 2,
  /** The check cannot be confined here (no working sandbox backend) and --unconfined-check was not given. */
  unconfinable: 3,
} as const

/**
 * `budget`: the tokens or the cost reached --budget-tokens / --budget-usd; `unpriced`: --budget-usd was given but
 * an iteration ran on a model the price table does not name, so the budget can no longer be measured;
 * `unconfinable`: the sandbox backend stopped working (nothing unconfined was run instead); `check-error`: the
 * check could not be started (the workspace is gone, the sandbox refused the authority, bash did not spawn).
 */
export type StopReason =
  'passed' | 'max-iterations' | 'budget' | 'unpriced' | 'run-failed' | 'unconfinable' | 'check-error' | 'interrupted'

/** The one line `--json` prints at the end (also for a usage error or a refusal, with what is known). */
export interface RalphResultLine {
  type: 'result'
  runId: string | null
  /** `usage`: a usage error before the loop started; `error`: it failed otherwise (a boot failure). */
  stopReason: StopReason | 'usage' | 'error'
  exitCode: number
  iterations: number
  sessions: string[]
  tokens: number
  cost: number | null
  lastCheck: CheckOutcome | null
  record: string | null
  message?: string
}

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

export interface CheckOutcome {
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  ms: number
  /** The last OUTPUT_TAIL_CHARS of stdout and stderr as they interleaved, secrets redacted. */
  outputTail: string
}

export interface Iteration {
  n: number
  /** Null when the iteration's dsh failed before it opened a session. */
  sessionId: string | null
  runExitCode: number | null
  /** The run's `turn/end` reason from its result line (or `no-result` when it printed none). */
  runReason: string
  tokens: number
  /** USD from the result line (the usage.prices setting); null when the model has no price or no line came. */
  cost: number | null
  usage: { input: number; cacheRead: number; cacheWrite: number; output: number }
  startedAt: string
  runMs: number
  /** Absent when the check was not run (the iteration failed before a session, or the loop was interrupted). */
  check?: CheckOutcome
}

export interface RalphRecord {
  version: typeof RECORD_VERSION
  runId: string
  prompt: string
  until: string
  cwd: string
  limits: { maxIterations: number; budgetTokens: number | null; budgetUsd: number | null; checkTimeoutSeconds: number }
  /** How the check runs: confined by the sandbox backend with no network, or unconfined (--unconfined-check). */
  confinement: { confined: boolean; backend: string; enforcement: string; network: 'none' | 'host' }
  startedAt: string
  endedAt: string | null
  stopReason: StopReason | null
  /** Why the check could not run, with `unconfinable` and `check-error`. */
  stopMessage?: string
  tokens: number
  /** The iterations' summed cost in USD; null once one of them could not be priced. */
  cost: number | null
  iterations: Iteration[]
}

const VALUE_FLAGS = new Set([
  '--until',
  '--max-iterations',
  '--budget-tokens',
  '--budget-usd',
  '--check-timeout',
  '--cwd',
  // Passed to every iteration's dsh as given.
  '--permission',
  '--preset',
  '--provider',
  '--model',
  '--effort',
  '--max-steps',
  '--max-turns',
  '--mcp-config',
])
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

/** What the next iteration is told, from the second on: where the loop is and how the last check failed. */
export function progressNote(n: number, args: RalphArgs, previous: Iteration): string {
  const check = previous.check
  const how = !check
    ? 'did not run'
    : check.timedOut
      ? `timed out after ${args.checkTimeoutSeconds} s and was killed`
      : check.exitCode === null
        ? `was ended by ${check.signal ?? 'a signal'}`
        : `exited ${check.exitCode}`
  const tail = check?.outputTail.trim()
  return [
    `[dsh ralph: this is iteration ${n} of at most ${args.maxIterations} on the task above. After iteration ${n - 1} the completion check \`${args.until}\` ${how}.`,
    tail ? `The end of its output:\n\`\`\`\n${tail}\n\`\`\`` : 'It printed nothing.',
    'Continue the work in this folder until that check passes (exit 0).]',
  ].join('\n')
}

/** Writes the record whole and durably: a temporary file, flushed, renamed over the old one, the folder flushed. */
export function writeRecord(file: string, record: RalphRecord): void {
  const temp = `${file}.${process.pid}.tmp`
  const fd = openSync(temp, 'w', 0o600)
  try {
    writeSync(fd, `${JSON.stringify(record, null, 2)}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, file)
  const dir = openSync(join(file, '..'), 'r')
  try {
    fsyncSync(dir)
  } finally {
    closeSync(dir)
  }
}

/**
 * One iteration's `dsh --json`, the prompt on its stdin (not in its argv, which every local user can read in
 * /proc): its result line (the last line; the event lines before it are read past).
 */
function runIteration(
  argv: string[],
  prompt: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; stderr: NodeJS.WritableStream; quiet: boolean },
  running: { child?: ReturnType<typeof spawn> },
): Promise<{ code: number | null; result?: ResultLine }> {
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    running.child = child
    child.stdin.on('error', () => {}) // a run that fails before it reads its task closes stdin early
    child.stdin.end(prompt)
    let pending = ''
    let result: ResultLine | undefined
    const read = (line: string) => {
      // Only the result line is parsed: the event lines before it can be many and large.
      if (!line.startsWith('{') || !line.includes('"type":"result"')) return
      try {
        const parsed = JSON.parse(line) as { type?: string }
        if (parsed.type === 'result') result = parsed as ResultLine
      } catch {}
    }
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n')
      pending = lines.pop()!
      for (const line of lines) read(line)
    })
    child.stderr.on('data', (chunk) => {
      if (!options.quiet) options.stderr.write(chunk)
    })
    child.on('error', fail)
    child.on('close', (code) => {
      running.child = undefined
      read(pending)
      done({ code, ...(result ? { result } : {}) })
    })
  })
}

interface TreeServices {
  sandbox: Sandbox
  sandboxPolicy: SandboxPolicy
  subprocess: Subprocess
  credentials: Credentials
  sessionAdmin: SessionAdmin
}

/** The sandbox backend's answer, or why the check cannot be confined. */
async function confinementOf(services: TreeServices, unconfined: boolean): Promise<RalphRecord['confinement']> {
  if (unconfined) return { confined: false, backend: 'none', enforcement: 'none', network: 'host' }
  const probe = await services.sandbox.probe()
  if (!probe.available)
    throw new UnconfinableError(
      `the check cannot be confined: ${probe.reason ?? `no working ${probe.backend ?? 'sandbox'} backend`}. ` +
        'Install bubblewrap (bwrap; Seatbelt on macOS) so dsh can confine it, or pass --unconfined-check to run the check as your own command.',
    )
  return { confined: true, backend: probe.backend ?? 'unknown', enforcement: 'full', network: 'none' }
}

class UnconfinableError extends Error {}

/**
 * Runs the completion command once: `bash -c <command>` confined (workspace-write on the workspace alone, the
 * path rules of every session, no network), spawned through `ctx.subprocess` (scrubbed environment, its own
 * process group, killed whole at the deadline).
 */
async function runCheck(
  services: TreeServices,
  args: RalphArgs,
  confinement: RalphRecord['confinement'],
  signal: AbortSignal,
): Promise<{ outcome: CheckOutcome; enforcement: string }> {
  const argv = ['bash', '-c', args.until]
  let enforcement = 'none'
  let command = argv
  if (confinement.confined) {
    const authority: SandboxAuthority = {
      mode: 'workspace-write',
      writableRoots: [args.cwd],
      paths: services.sandboxPolicy.pathRules([args.cwd]),
      network: { kind: 'none' },
    }
    const confined = await services.sandbox.confine(argv, { cwd: args.cwd, authority })
    if (confined.enforcement === 'none')
      throw new UnconfinableError(`the sandbox (${confined.backend}) did not confine the check; refusing to run it`)
    command = confined.argv
    enforcement = confined.enforcement
  }
  const result: RunResult = await services.subprocess.run(command, {
    cwd: args.cwd,
    timeoutMs: Math.ceil(args.checkTimeoutSeconds * 1000),
    outputCapBytes: CHECK_OUTPUT_CAP_BYTES,
    signal,
  })
  const output = services.credentials.redact(result.output)
  return {
    outcome: {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      ms: result.durationMs,
      outputTail: output.slice(-OUTPUT_TAIL_CHARS),
    },
    enforcement,
  }
}

const tokensOf = (usage: ResultLine['usage'] | undefined) => ({
  input: usage?.input ?? 0,
  cacheRead: usage?.cacheRead ?? 0,
  cacheWrite: usage?.cacheWrite ?? 0,
  output: usage?.output ?? 0,
})

export interface RalphIO {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  env: NodeJS.ProcessEnv
  ownsProcess: boolean
}

/** `dsh ralph …`: the loop, its record, its final line; returns the exit code (RALPH_EXIT, or 130/143). */
export async function ralphCommand(
  rest: string[],
  options: Parameters<typeof bootTree>[0] & { home: string; patches: string[] },
  dshBin: string,
  io: RalphIO,
): Promise<number> {
  const end = rest.indexOf('--')
  const json = (end === -1 ? rest : rest.slice(0, end)).includes('--json')
  const line = (fields: Partial<RalphResultLine> & Pick<RalphResultLine, 'stopReason' | 'exitCode'>) =>
    json &&
    io.stdout.write(
      `${JSON.stringify({ type: 'result', runId: null, iterations: 0, sessions: [], tokens: 0, cost: 0, lastCheck: null, record: null, ...fields } satisfies RalphResultLine)}\n`,
    )
  try {
    return await loop(rest, options, dshBin, io, line)
  } catch (error) {
    // The launcher reports these on stderr and exits with their code; `--json` still owes its one line.
    const usageError =
      error instanceof LauncherUsageError ||
      error instanceof CompositionError ||
      (error instanceof BootError && error.isUserError)
    line({
      stopReason: usageError ? 'usage' : 'error',
      exitCode: usageError ? RALPH_EXIT.usage : RALPH_EXIT.notPassed,
      message: error instanceof Error ? error.message : String(error),
    })
    throw error
  }
}

async function loop(
  rest: string[],
  options: Parameters<typeof bootTree>[0] & { home: string; patches: string[] },
  dshBin: string,
  io: RalphIO,
  line: (fields: Partial<RalphResultLine> & Pick<RalphResultLine, 'stopReason' | 'exitCode'>) => unknown,
): Promise<number> {
  const args = parseRalphArgs(rest, options.cwd ?? process.cwd(), options.patches)
  const say = (line: string) => (args.quiet ? undefined : io.stderr.write(`dsh ralph: ${line}\n`))
  // The headless tree gives the check the seams every command of a session goes through; nothing launches, so
  // its streams are quiet ones: what its rows log goes to our stderr, nothing reads its stdin.
  const stdio = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }
  stdio.stdin.end()
  stdio.stdout.resume()
  stdio.stderr.on('data', (chunk) => io.stderr.write(chunk))
  const tree: BootedTree = await bootTree({ ...options, profile: 'headless', cwd: args.cwd, argv: [], stdio })
  const controller = new AbortController()
  const running: { child?: ReturnType<typeof spawn> } = {}
  let signalled: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(signal === 'SIGINT' ? 130 : 143)
    signalled = signal
    running.child?.kill(signal) // the iteration saves its session and ends; on a terminal it got the signal too
    controller.abort()
  }
  if (io.ownsProcess) {
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  }
  try {
    const services = tree.root as unknown as TreeServices
    const refusal = services.sandboxPolicy.workspaceRefusal(args.cwd)
    if (refusal) throw new LauncherUsageError(`dsh ralph: ${refusal}`)
    let confinement: RalphRecord['confinement']
    try {
      confinement = await confinementOf(services, args.unconfinedCheck)
    } catch (error) {
      if (!(error instanceof UnconfinableError)) throw error
      io.stderr.write(`dsh ralph: ${error.message}\n`)
      line({ stopReason: 'unconfinable', exitCode: RALPH_EXIT.unconfinable, message: error.message })
      return RALPH_EXIT.unconfinable
    }
    if (!confinement.confined) say('--unconfined-check: the check runs as your own command, without the sandbox')
    const runId = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
    const dir = join(options.home, 'ralph')
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const file = join(dir, `${runId}.json`)
    const record: RalphRecord = {
      version: RECORD_VERSION,
      runId,
      prompt: args.prompt,
      until: args.until,
      cwd: args.cwd,
      limits: {
        maxIterations: args.maxIterations,
        budgetTokens: args.budgetTokens ?? null,
        budgetUsd: args.budgetUsd ?? null,
        checkTimeoutSeconds: args.checkTimeoutSeconds,
      },
      confinement,
      startedAt: new Date().toISOString(),
      endedAt: null,
      stopReason: null,
      tokens: 0,
      cost: 0,
      iterations: [],
    }
    writeRecord(file, record)
    say(`run ${runId} (record: ${file})`)
    let stop: StopReason | undefined
    let code: number = RALPH_EXIT.notPassed
    for (let n = 1; !stop; n++) {
      const previous = record.iterations.at(-1)
      const prompt = previous ? `${args.prompt}\n\n${progressNote(n, args, previous)}` : args.prompt
      const startedAt = new Date()
      const argv = [
        process.execPath,
        dshBin,
        '--profile',
        'headless',
        '--json',
        ...(args.quiet ? ['--quiet'] : []),
        '--cwd',
        args.cwd,
        ...args.runFlags,
      ]
      const ran = await runIteration(
        argv,
        prompt,
        { cwd: args.cwd, env: io.env, stderr: io.stderr, quiet: args.quiet },
        running,
      )
      const usage = tokensOf(ran.result?.usage)
      const iteration: Iteration = {
        n,
        sessionId: ran.result?.sessionId ?? null,
        runExitCode: ran.code,
        runReason: ran.result?.reason ?? 'no-result',
        tokens: usage.input + usage.cacheRead + usage.cacheWrite + usage.output,
        cost: typeof ran.result?.cost === 'number' ? ran.result.cost : null,
        usage,
        startedAt: startedAt.toISOString(),
        runMs: Date.now() - startedAt.getTime(),
      }
      record.iterations.push(iteration)
      record.tokens += iteration.tokens
      record.cost = record.cost === null || iteration.cost === null ? null : record.cost + iteration.cost
      if (iteration.sessionId)
        await services.sessionAdmin
          .rename(iteration.sessionId, `ralph ${runId} #${n}: ${args.prompt}`.slice(0, TITLE_CHARS))
          .catch((error: Error) => say(`could not title session ${iteration.sessionId}: ${error.message}`))
      if (signalled) stop = 'interrupted'
      else if (!iteration.sessionId) {
        // The same arguments would fail the same way next time (a bad flag, a missing key): stop here.
        stop = 'run-failed'
        code = ran.code === RALPH_EXIT.usage ? RALPH_EXIT.usage : RALPH_EXIT.notPassed
        say(`iteration ${n}: dsh exited ${ran.code} before it opened a session; stopping`)
      } else {
        writeRecord(file, record) // the session is on record while the check runs
        let checked: Awaited<ReturnType<typeof runCheck>>
        try {
          checked = await runCheck(services, args, confinement, controller.signal)
        } catch (error) {
          // Read by name: the tree's plugins may load their own copy of the seams' modules (the packaged launcher).
          const { name, code: reason } = (error ?? {}) as { name?: string; code?: string }
          const refused =
            error instanceof UnconfinableError || (name === 'SandboxError' && reason === 'SANDBOX_UNAVAILABLE')
          if (!refused && name !== 'SandboxError' && name !== 'SubprocessError') throw error
          stop = refused ? 'unconfinable' : 'check-error'
          code = refused ? RALPH_EXIT.unconfinable : RALPH_EXIT.notPassed
          record.stopMessage = (error as Error).message
          io.stderr.write(`dsh ralph: iteration ${n}: the check was not run: ${(error as Error).message}\n`)
          record.stopReason = stop
          record.endedAt = new Date().toISOString()
          writeRecord(file, record)
          break
        }
        const { outcome, enforcement } = checked
        iteration.check = outcome
        record.confinement.enforcement = enforcement
        say(
          `iteration ${n}: session ${iteration.sessionId}, ${iteration.tokens} tokens, check ${
            outcome.timedOut
              ? `timed out after ${args.checkTimeoutSeconds} s (killed)`
              : `exited ${outcome.exitCode ?? outcome.signal}`
          }`,
        )
        if (signalled) stop = 'interrupted'
        else if (outcome.exitCode === 0) {
          stop = 'passed'
          code = RALPH_EXIT.passed
        } else if (args.budgetTokens !== undefined && record.tokens >= args.budgetTokens) stop = 'budget'
        else if (args.budgetUsd !== undefined && iteration.cost === null) {
          stop = 'unpriced'
          say(`iteration ${n} ran on a model without a price (usage.prices): --budget-usd cannot be counted; stopping`)
        } else if (args.budgetUsd !== undefined && record.cost! >= args.budgetUsd) stop = 'budget'
        else if (n >= args.maxIterations) stop = 'max-iterations'
      }
      if (stop) {
        record.stopReason = stop
        record.endedAt = new Date().toISOString()
      }
      writeRecord(file, record)
    }
    if (signalled) code = signalled === 'SIGINT' ? 130 : 143
    const sessions = record.iterations.flatMap((iteration) => (iteration.sessionId ? [iteration.sessionId] : []))
    if (args.json)
      line({
        runId,
        stopReason: stop!,
        exitCode: code,
        iterations: record.iterations.length,
        sessions,
        tokens: record.tokens,
        cost: record.cost,
        lastCheck: record.iterations.at(-1)?.check ?? null,
        record: file,
        ...(record.stopMessage ? { message: record.stopMessage } : {}),
      })
    else
      io.stdout.write(
        `${describeStop(stop!, record)} after ${record.iterations.length} iteration${record.iterations.length === 1 ? '' : 's'} (${record.tokens} tokens); record: ${file}\n`,
      )
    return code
  } finally {
    if (io.ownsProcess) {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
    await tree.stop()
  }
}

function describeStop(stop: StopReason, record: RalphRecord): string {
  if (stop === 'passed') return 'the check passed'
  if (stop === 'budget')
    return record.limits.budgetTokens !== null && record.tokens >= record.limits.budgetTokens
      ? `stopped at the token budget (${record.limits.budgetTokens})`
      : `stopped at the cost budget ($${record.limits.budgetUsd})`
  if (stop === 'unpriced') return 'stopped: an iteration ran on an unpriced model, so --budget-usd cannot be counted'
  if (stop === 'max-iterations')
    return `the check never passed: stopped at --max-iterations ${record.limits.maxIterations}`
  if (stop === 'interrupted') return 'interrupted'
  if (stop === 'unconfinable') return `stopped: the check could not be confined (${record.stopMessage})`
  if (stop === 'check-error') return `stopped: the check could not be started (${record.stopMessage})`
  return 'stopped: an iteration could not run'
}
