// Runs the real launcher (`run()` of @dsh/cli, what bin/dsh.js runs) inside the test's own process: the same
// argv, profiles, bundles and composition as a spawned `dsh`, with its standard streams and environment given
// here instead of the process's. A test whose subject is the process boundary (exit by signal, stdout purity
// of the real file descriptors, the installed bin) spawns `dsh` instead (docs/architecture.md, "Tests").
import { PassThrough } from 'node:stream'
import { run } from '@dsh/cli'
import { appDir } from './index.ts'

export interface InProcessLaunch {
  /** Resolves with the exit code `dsh` would have exited with. */
  exited: Promise<number>
  /** Everything written to stdout and stderr so far. */
  stdout(): string
  stderr(): string
  /** Standard input: a pipe the test may write to and end (ended already when `stdin` text was given). */
  stdin: PassThrough
  /** The output pipes themselves, for a test that reads them as they are written (utf8 text). */
  streams: { stdout: PassThrough; stderr: PassThrough }
}

export interface InProcessOptions {
  /** Text piped to stdin, then closed; without it stdin is a pipe left open until the launch ends. */
  stdin?: string
  /** The launch's environment: replaces `process.env` while the launch runs (plugins read it there). */
  env: Record<string, string>
  cwd: string
}

let active: { env: Record<string, string>; count: number } | undefined

/**
 * Variables only the launcher reads, and from its own `env` (`LauncherIO.env`), never a plugin from `process.env`:
 * launches side by side may differ in these (two SDK runtimes, each with its own home).
 */
const LAUNCHER_KEYS = ['DSH_HOME', 'DSH_DRAIN_TIMEOUT_MS']
const withoutLauncherKeys = (env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).filter(([key]) => !LAUNCHER_KEYS.includes(key)))
let saved: NodeJS.ProcessEnv | undefined

/**
 * Makes `env` the process's environment until the returned function is called. The plugins of a tree read
 * `process.env` (credentials, proxies, the shell's environment), so a launch in this process sees exactly `env`,
 * as a spawned one would. Launches side by side must share one environment, but for LAUNCHER_KEYS; a second one is
 * refused, loudly.
 */
function enterEnv(env: Record<string, string>): () => void {
  if (active) {
    if (JSON.stringify(withoutLauncherKeys(active.env)) !== JSON.stringify(withoutLauncherKeys(env)))
      throw new Error('two in-process dsh launches with different environments at once')
    active.count++
  } else {
    saved = { ...process.env }
    active = { env, count: 1 }
    // In place (not a new object): the C environment follows, which os.homedir() and native code read.
    for (const key of Object.keys(process.env)) delete process.env[key]
    Object.assign(process.env, env)
  }
  return () => {
    if (--active!.count > 0) return
    active = undefined
    for (const key of Object.keys(process.env)) delete process.env[key]
    Object.assign(process.env, saved)
  }
}

/** Starts `dsh <args>` in this process; see InProcessLaunch. */
export function launchInProcess(args: string[], options: InProcessOptions): InProcessLaunch {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  if (options.stdin !== undefined) stdin.end(options.stdin)
  const leave = enterEnv(options.env)
  const exited = (async () => {
    try {
      return await run(args, { stdin, stdout, stderr, cwd: options.cwd, env: options.env, appDir, ownsProcess: false })
    } catch (error) {
      // What bin.js would print before Node's own exit 1 on an uncaught error.
      err += `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
      return 1
    } finally {
      leave()
      stdin.end()
      // Let the streams hand their last chunks to the listeners above.
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  return { exited, stdout: () => out, stderr: () => err, stdin, streams: { stdout, stderr } }
}

/** Runs `dsh <args>` in this process to its end. */
export async function dshInProcess(
  args: string[],
  options: InProcessOptions,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const launch = launchInProcess(args, options)
  const code = await launch.exited
  return { code, stdout: launch.stdout(), stderr: launch.stderr() }
}
