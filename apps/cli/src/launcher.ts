import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fiberStateName } from '@dsh/cordis'
import {
  BootError,
  bootTree,
  composeProfile,
  CompositionError,
  defaultHome,
  walkRows,
  type BootedTree,
} from '@dsh/app-boot'
import type { SettingsService } from '@dsh/settings'
import { lineText, notStartedResult } from '@dsh/headless-lines'
import { HELP, LauncherUsageError, parseLauncherArgs, type LauncherArgs } from './args.ts'
import { wantsRunLines } from './run-lines.ts'
import { knownSettingKeys, unknownSettingProblems } from './settings-keys.ts'
import { promptCommand } from './prompt-show.ts'
import { evalCommand } from './eval.ts'
import { RALPH_HELP, ralphCommand } from './ralph.ts'
import { PLUGINS_HELP, pluginsCommand } from './plugins.ts'

export interface LauncherIO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  cwd: string
  /** The environment the launcher itself reads (`DSH_HOME`, `DSH_DRAIN_TIMEOUT_MS`). */
  env: NodeJS.ProcessEnv
  /** Where the launcher's package.json (profiles, bundles) lives. */
  appDir: string
  /**
   * Whether this launch owns the process (bin.ts): it then ends the launch on SIGINT/SIGTERM and exits the
   * process when draining hangs. An in-process driver (a test) passes false: no process listeners, no exit;
   * a hung drain returns its code.
   */
  ownsProcess: boolean
}

const defaultAppDir = join(dirname(fileURLToPath(import.meta.url)), '..')

/** How long the tree may take to drain before the launcher gives up (env DSH_DRAIN_TIMEOUT_MS). */
const DEFAULT_DRAIN_MS = 10_000

const SIGNAL_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 }

/**
 * The `dsh` launcher: parses its own options, composes or boots the profile's tree, owns the process's
 * lifetime and signals (docs/architecture.md, "Boot"). Returns the exit code.
 */
export async function run(argv: string[], io: Partial<LauncherIO> = {}): Promise<number> {
  const {
    stdin = process.stdin,
    stdout = process.stdout,
    stderr = process.stderr,
    cwd = process.cwd(),
    env = process.env,
    appDir = defaultAppDir,
    ownsProcess = true,
  } = io
  const started = performance.now()
  const manifest = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8'))
  const shipped = Object.keys(manifest.dsh?.profiles ?? {})
  let args: LauncherArgs | undefined
  /** One `dsh:` line per problem on stderr and, when the run asked for `--json`, its result line on stdout. */
  const fail = (code: number, ...problems: string[]) => {
    for (const problem of problems) stderr.write(`dsh: ${problem}\n`)
    if (wantsRunLines(argv, args, shipped))
      stdout.write(lineText(notStartedResult(code, { message: problems.join('\n') }, performance.now() - started)))
    return code
  }
  try {
    args = parseLauncherArgs(argv)
  } catch (error) {
    if (error instanceof LauncherUsageError) return fail(2, `${error.message} (see dsh --help)`)
    throw error
  }
  if (args.version) {
    stdout.write(`dsh ${manifest.version}\n`)
    return 0
  }
  if (args.help) {
    stdout.write(args.rest[0] === 'ralph' ? RALPH_HELP : args.rest[0] === 'plugins' ? PLUGINS_HELP : HELP)
    return 0
  }
  if (args.rest[0] === 'plugins') {
    // Before any tree: a plugin that breaks boot can still be listed and removed.
    try {
      return await pluginsCommand(args.rest, { stdout, stderr, cwd, env, home: defaultHome(env) })
    } catch (error) {
      if (error instanceof LauncherUsageError) return fail(2, `${error.message} (see dsh plugins help)`)
      throw error
    }
  }
  const options = {
    appDir,
    profile: chooseProfile(args, { stdin, stdout }),
    patches: args.patches,
    cwd,
    argv: args.rest,
    home: defaultHome(env),
    stdio: { stdin, stdout, stderr },
  }
  try {
    if (args.dumpConfig) {
      stdout.write(composeProfile(options).dump())
      return 0
    }
    if (args.rest[0] === 'prompt') return await promptCommand(args.rest, options, stdout)
    if (args.rest[0] === 'eval') return await evalCommand(args.rest, join(appDir, 'bin', 'dsh.js'), stdout)
    if (args.rest[0] === 'ralph') {
      if (args.profile && args.profile !== 'headless')
        throw new LauncherUsageError(`dsh ralph runs headless iterations; --profile ${args.profile} does not apply`)
      return await ralphCommand(args.rest, options, join(appDir, 'bin', 'dsh.js'), { stdout, stderr, env, ownsProcess })
    }
    return await runTree(options, args.check, { stdout, stderr, env, ownsProcess }, fail)
  } catch (error) {
    if (error instanceof LauncherUsageError) return fail(2, error.message)
    if (error instanceof CompositionError) return fail(2, error.message)
    // A user mistake reported by a plugin (a bad flag, a bad settings file) reads as the mistake alone.
    if (error instanceof BootError)
      return error.isUserError ? fail(2, ...error.failures.map((failure) => failure.problem)) : fail(1, error.message)
    throw error
  }
}

/**
 * The profile of a launch that named none: a person at a terminal gets the terminal UI (`dsh` alone, or
 * `dsh resume` with no id: its session picker); everything else, and any input or output that is not a
 * terminal (`echo task | dsh`, `dsh "task" | tee`), stays headless, so scripts keep working.
 */
export function chooseProfile(
  args: Pick<ReturnType<typeof parseLauncherArgs>, 'profile' | 'profileByCommand' | 'rest'>,
  { stdin, stdout }: { stdin: { isTTY?: boolean }; stdout: { isTTY?: boolean } },
): string {
  const terminal = !!stdin.isTTY && !!stdout.isTTY
  if (args.profileByCommand && terminal && args.rest.length === 1 && args.rest[0] === 'resume') return 'tui'
  if (args.profile) return args.profile
  return terminal && args.rest.length === 0 ? 'tui' : 'headless'
}

async function runTree(
  options: Parameters<typeof bootTree>[0],
  check: boolean,
  { stdout, stderr, env, ownsProcess }: Pick<LauncherIO, 'stdout' | 'stderr' | 'env' | 'ownsProcess'>,
  fail: (code: number, ...problems: string[]) => number,
): Promise<number> {
  let finish!: (code: number) => void
  const finished = new Promise<number>((resolve) => (finish = resolve))
  let tree: BootedTree | undefined
  let signalled = 0
  let endedBy: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    const code = SIGNAL_CODES[signal] ?? 1
    if (++signalled > 1) {
      stderr.write(`dsh: second ${signal}, exiting without draining\n`)
      process.exit(code)
    }
    endedBy = signal
    finish(code)
  }
  const onBeforeExit = () => finish(0)
  if (ownsProcess) {
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    // The loop emptied: nothing in the tree holds the process, so the launch is over.
    process.on('beforeExit', onBeforeExit)
  }
  try {
    tree = await bootTree({ ...options, onExitRequest: (code) => finish(code) })
    // An installed plugin that threw costs its own rows: said here, once, with its layer line and file.
    for (const failure of tree.pluginFailures) stderr.write(`dsh: ${failure.problem}\n`)
    // Every plugin has defined its settings now: a key in settings.yaml nobody defines is a typo, unless a
    // plugin of another shipped profile defines it. Checked before anything is launched.
    const settings = (tree.root as any).settings as SettingsService | undefined
    const problems = settings ? unknownSettingProblems(settings.unclaimed(), knownSettingKeys(options.appDir)) : []
    if (problems.length) {
      finish(fail(2, ...problems))
    } else if (check) {
      for (const [row, parent] of walkRows(tree.composition.rows)) {
        const entry = (tree.loader as any).store[row.id]
        const state = row.children
          ? 'group'
          : entry?.disabled
            ? 'disabled'
            : (fiberStateName(entry?.fiber?.state) ?? 'absent')
        stdout.write(`${parent ? '  ' : ''}${row.id}\t${row.name ?? ''}\t${state}\n`)
      }
      finish(0)
    } else if (!signalled) {
      // Every row has settled: surfaces may start now (one started while rows were still mounting could
      // send a request before every tool is registered). `app/launched` is declared by @dsh/app.
      ;(tree.root as any).emit('app/launched')
    }
    const code = await finished
    // Draining holds the process (a teardown may wait on nothing Node can see) but not forever.
    const drainMs = Number(env.DSH_DRAIN_TIMEOUT_MS ?? DEFAULT_DRAIN_MS)
    let hung!: (code: number) => void
    const drainHung = new Promise<number>((resolve) => (hung = resolve))
    const guard = setTimeout(() => {
      stderr.write(`dsh: the plugin tree did not finish draining within ${drainMs} ms; exiting\n`)
      if (ownsProcess) process.exit(code || 1)
      hung(code || 1)
    }, drainMs)
    const booted = tree
    const drain = async () => {
      // Disposal undoes every plugin at once, so surfaces make their running work durable first (a
      // cancelled turn's `turn/end` logged and flushed), while every service is still up.
      await (booted.root as any)
        .serial('app/draining', { code, ...(endedBy ? { signal: endedBy } : {}) })
        .catch((error: unknown) =>
          stderr.write(
            `dsh: a plugin failed while draining: ${error instanceof Error ? error.message : String(error)}\n`,
          ),
        )
      await booted.stop()
      return code
    }
    try {
      return await Promise.race([drain(), drainHung])
    } finally {
      clearTimeout(guard)
    }
  } finally {
    process.off('beforeExit', onBeforeExit)
    if (!signalled) {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
  }
}
