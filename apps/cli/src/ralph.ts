// `dsh ralph "<prompt>" --until "<command>"`: runs the prompt as one headless dsh session after another until a
// completion command passes (docs/ralph.md). Each iteration is a separate `dsh --json` process and a stored
// session; the check runs confined through the booted tree's own sandbox seam.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { BootError, bootTree, CompositionError, type BootedTree } from '@dsh/app-boot'
import type { ResultLine } from '@dsh/headless-lines'
import { LauncherUsageError } from './args.ts'
import { parseRalphArgs, type RalphArgs } from './ralph-args.ts'
import { confinementOf, runCheck, UnconfinableError, type TreeServices } from './ralph-check.ts'
import {
  RALPH_EXIT,
  RECORD_VERSION,
  writeRecord,
  type Iteration,
  type RalphRecord,
  type RalphResultLine,
  type StopReason,
} from './ralph-record.ts'

export { RALPH_HELP } from './ralph-args.ts'
export { RALPH_EXIT, type RalphRecord } from './ralph-record.ts'

/** Longest title given to an iteration's session (`ralph <run-id> #<n>: <the prompt's head>`). */
const TITLE_CHARS = 120

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
