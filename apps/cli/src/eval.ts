// `dsh eval <dir>`: runs task folders through the headless runtime and reports how the harness did
// (docs/eval.md). Each task runs in a fresh temporary copy with its own DSH_HOME, as a real `dsh` process.
import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { LauncherUsageError } from './args.ts'

/** A task folder: `task.json` ({ instruction, check, timeoutMs? }) and the fixture repository `repo/`. */
export interface EvalTask {
  name: string
  dir: string
  instruction: string
  check: string
  timeoutMs?: number
}

export interface TaskResult {
  task: string
  passed: boolean
  /** Why it failed: the check's output tail, or the run's failure. */
  detail?: string
  exitCode: number | null
  steps: number
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number }
  /** From `dsh usage` with the `usage.prices` setting; null when the model is unpriced. */
  cost: number | null
  seconds: number
}

export interface EvalReport {
  dir: string
  tasks: number
  passed: number
  passRate: number
  results: TaskResult[]
}

interface EvalArgs {
  dir: string
  parallel: number
  out?: string
  keep: boolean
  timeoutMs: number
  extra: string[]
}

const DEFAULT_TIMEOUT_MS = 600_000

function parseEvalArgs(rest: string[]): EvalArgs {
  const args: EvalArgs = { dir: '', parallel: 1, keep: false, timeoutMs: DEFAULT_TIMEOUT_MS, extra: [] }
  for (let i = 1; i < rest.length; i++) {
    const arg = rest[i]!
    const value = () => {
      const next = rest[++i]
      if (next === undefined) throw new LauncherUsageError(`dsh eval: ${arg} needs a value`)
      return next
    }
    if (arg === '--parallel') args.parallel = Number(value())
    else if (arg === '--out') args.out = value()
    else if (arg === '--timeout-ms') args.timeoutMs = Number(value())
    else if (arg === '--keep') args.keep = true
    else if (arg === '--provider' || arg === '--model' || arg === '--effort' || arg === '--max-steps')
      args.extra.push(arg, value())
    else if (!arg.startsWith('--') && !args.dir) args.dir = arg
    else
      throw new LauncherUsageError(
        `dsh eval: unknown argument "${arg}" (dsh eval <dir> [--parallel n] [--out report.json] [--timeout-ms n] [--keep] [--provider p --model m --max-steps n])`,
      )
  }
  if (!args.dir) throw new LauncherUsageError('dsh eval: name the folder of tasks (dsh eval <dir>)')
  if (!Number.isInteger(args.parallel) || args.parallel < 1)
    throw new LauncherUsageError('dsh eval: --parallel must be a whole number ≥ 1')
  if (!Number.isInteger(args.timeoutMs) || args.timeoutMs < 1)
    throw new LauncherUsageError('dsh eval: --timeout-ms must be a whole number ≥ 1')
  return args
}

/** The tasks of `dir`, sorted by name; a folder without a valid task.json and repo/ is a usage error naming it. */
export function loadTasks(dir: string): EvalTask[] {
  if (!existsSync(dir)) throw new LauncherUsageError(`dsh eval: ${dir} does not exist`)
  const tasks: EvalTask[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })
    .filter((item) => item.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const folder = join(dir, entry.name)
    const file = join(folder, 'task.json')
    if (!existsSync(file)) continue
    let spec: Partial<EvalTask>
    try {
      spec = JSON.parse(readFileSync(file, 'utf8'))
    } catch (error) {
      throw new LauncherUsageError(`dsh eval: ${file}: not valid JSON (${(error as Error).message})`)
    }
    if (typeof spec.instruction !== 'string' || !spec.instruction)
      throw new LauncherUsageError(`dsh eval: ${file}: "instruction" must be a non-empty string`)
    if (typeof spec.check !== 'string' || !spec.check)
      throw new LauncherUsageError(
        `dsh eval: ${file}: "check" must be a non-empty string (a bash command; exit 0 passes)`,
      )
    if (!existsSync(join(folder, 'repo')))
      throw new LauncherUsageError(`dsh eval: ${folder}: no repo/ folder (the fixture repository)`)
    tasks.push({
      name: entry.name,
      dir: folder,
      instruction: spec.instruction,
      check: spec.check,
      ...(typeof spec.timeoutMs === 'number' ? { timeoutMs: spec.timeoutMs } : {}),
    })
  }
  if (!tasks.length)
    throw new LauncherUsageError(`dsh eval: ${dir} holds no task folders (each needs task.json and repo/)`)
  return tasks
}

/** Runs a process to its end (or its deadline), collecting stdout and the tail of stderr. */
function runProcess(
  argv: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)))
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL') // the whole group: a check may have started children
      } catch {}
    }, options.timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr })
    })
  })
}

async function runTask(task: EvalTask, args: EvalArgs, dshBin: string): Promise<TaskResult> {
  const root = mkdtempSync(join(tmpdir(), `dsh-eval-${task.name}-`))
  const work = join(root, 'work')
  const home = join(root, 'home')
  cpSync(join(task.dir, 'repo'), work, { recursive: true })
  const env = { ...process.env, DSH_HOME: home }
  const started = Date.now()
  const timeoutMs = task.timeoutMs ?? args.timeoutMs
  try {
    const run = await runProcess(
      [process.execPath, dshBin, '--profile', 'headless', '--json', '--approve', ...args.extra, task.instruction],
      { cwd: work, env, timeoutMs },
    )
    const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    let steps = 0
    for (const line of run.stdout.split('\n')) {
      if (!line.startsWith('{')) continue
      const event = JSON.parse(line) as { type: string; data: { usage?: Partial<typeof tokens> } }
      if (event.type === 'step/start') steps++
      if (event.type === 'assistant/message')
        for (const key of Object.keys(tokens) as (keyof typeof tokens)[]) tokens[key] += event.data.usage?.[key] ?? 0
    }
    const seconds = (Date.now() - started) / 1000
    const check = await runProcess(['bash', '-c', task.check], { cwd: work, env: { ...process.env }, timeoutMs })
    const usage = await runProcess([process.execPath, dshBin, 'usage', '--json', '--cwd', work], {
      cwd: work,
      env,
      timeoutMs: 60_000,
    })
    let cost: number | null = null
    try {
      cost = (JSON.parse(usage.stdout) as { total?: { cost?: number | null } }).total?.cost ?? null
    } catch {}
    const passed = check.code === 0
    const detail = passed
      ? undefined
      : run.code !== 0
        ? `dsh exited ${run.code}: ${run.stderr.trim().split('\n').at(-1) ?? ''}`
        : `check failed (${check.code}): ${(check.stdout + check.stderr).trim().slice(-300)}`
    return { task: task.name, passed, ...(detail ? { detail } : {}), exitCode: run.code, steps, tokens, cost, seconds }
  } finally {
    if (!args.keep) rmSync(root, { recursive: true, force: true })
  }
}

/** Runs every task of `dir`, at most `parallel` at a time, in task order in the report. */
export async function runEval(args: EvalArgs, dshBin: string): Promise<EvalReport> {
  const tasks = loadTasks(args.dir)
  const results: TaskResult[] = []
  let next = 0
  const worker = async () => {
    for (let at = next++; at < tasks.length; at = next++) results[at] = await runTask(tasks[at]!, args, dshBin)
  }
  await Promise.all(Array.from({ length: Math.min(args.parallel, tasks.length) }, worker))
  const passed = results.filter((result) => result.passed).length
  return { dir: resolve(args.dir), tasks: tasks.length, passed, passRate: passed / tasks.length, results }
}

export function formatReport(report: EvalReport): string {
  const rows = report.results.map((r) => [
    r.task,
    r.passed ? 'pass' : 'FAIL',
    String(r.steps),
    String(r.tokens.input + r.tokens.cacheRead + r.tokens.cacheWrite),
    String(r.tokens.output),
    r.cost === null ? '-' : `$${r.cost.toFixed(4)}`,
    r.seconds.toFixed(1),
  ])
  const header = ['task', 'result', 'steps', 'input', 'output', 'cost', 'seconds']
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd()
  const failures = report.results.filter((r) => r.detail).map((r) => `${r.task}: ${r.detail}`)
  return (
    [
      line(header),
      ...rows.map(line),
      '',
      `passed ${report.passed} of ${report.tasks} (${Math.round(report.passRate * 100)}%)`,
      ...failures,
    ].join('\n') + '\n'
  )
}

/** `dsh eval …`; exit 0 when the run finished (whatever the pass rate), 2 for bad usage. */
export async function evalCommand(rest: string[], dshBin: string, stdout: NodeJS.WritableStream): Promise<number> {
  const args = parseEvalArgs(rest)
  const report = await runEval(args, dshBin)
  if (args.out) writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`)
  stdout.write(formatReport(report))
  return 0
}
