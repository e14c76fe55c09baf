import { spawn, type ChildProcess } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { appDir, dshInProcess, WITHOUT_AUTO_TITLE } from '@dsh/test-harness'

/**
 * The real launcher as a user runs it: the bundle `npm run setup` builds (apps/cli/bin/dsh.js), for the tests
 * whose subject is the process (signals, the real stdout, a child that is killed).
 */
export const dshBin = join(appDir, 'bin/dsh.js')

/**
 * Rows added as a `--patch` layer to every run (bundle-base mounts the DeepSeek adapter and the coding
 * tools; the title request is off, as in every test composition). Kept in one place so a missing row is one edit.
 */
const EXTRA_PATCH = WITHOUT_AUTO_TITLE

export interface World {
  /** The temp `DSH_HOME`. */
  home: string
  /** The temp repository the runs work in (their cwd). */
  repo: string
  /** The model: a local server speaking DeepSeek's wire format. */
  llm: MockServer
  /** Environment for the child: only what dsh needs (no inherited keys). */
  env: Record<string, string>
  /** `--patch` arguments every run gets (EXTRA_PATCH, when it is not empty). */
  patchArgs: string[]
  write(relative: string, text: string): string
  read(relative: string): string
  dispose(): Promise<void>
}

/** A temp home and repository, and a mock DeepSeek the spawned dsh is pointed at. */
export async function makeWorld(): Promise<World> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-headless-home-')))
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-headless-repo-')))
  const llm = await startMockServer()
  const patchArgs: string[] = []
  if (EXTRA_PATCH) {
    writeFileSync(join(home, 'extra.patch.yml'), EXTRA_PATCH)
    patchArgs.push('--patch', join(home, 'extra.patch.yml'))
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    // Any value the mock accepts; long enough that credentials-local redacts it (it warns about shorter ones).
    DEEPSEEK_API_KEY: 'test-key-for-the-mock-server',
  }
  return {
    home,
    repo,
    llm,
    env,
    patchArgs,
    write(relative, text) {
      const file = join(repo, relative)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, text)
      return file
    },
    read: (relative) => readFileSync(join(repo, relative), 'utf8'),
    async dispose() {
      await llm.close()
      rmSync(home, { recursive: true, force: true })
      rmSync(repo, { recursive: true, force: true })
    },
  }
}

export interface Launch {
  child: ChildProcess
  /** Resolves with the exit code (null when killed by a signal it did not handle). */
  exited: Promise<number | null>
  stdout(): string
  stderr(): string
}

export interface LaunchOptions {
  /** Text piped to stdin, then closed; without it stdin is a pipe left open. */
  stdin?: string
  /** Replaces the world's environment for this launch. */
  env?: Record<string, string>
  cwd?: string
}

/** Spawns `dsh <args>` in the world's repository. */
export function launchDsh(world: World, args: string[], options: LaunchOptions = {}): Launch {
  const child = spawn(process.execPath, [dshBin, ...world.patchArgs, ...args], {
    cwd: options.cwd ?? world.repo,
    env: options.env ?? world.env,
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  if (options.stdin !== undefined) child.stdin!.end(options.stdin)
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

/**
 * Runs `dsh <args>` to its end, in this process (the launcher's `run()` with the world's environment, cwd and
 * streams: @dsh/test-harness `dshInProcess`): the same composition and output as a spawned `dsh`, without a
 * process start and its module loading.
 */
export async function dsh(
  world: World,
  args: string[],
  options: LaunchOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return dshInProcess([...world.patchArgs, ...args], {
    env: options.env ?? world.env,
    cwd: options.cwd ?? world.repo,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  })
}

/** Runs `dsh <args>` as a process to its end: for a test whose subject is the process boundary. */
export async function dshProcess(world: World, args: string[], options: LaunchOptions = {}) {
  const launch = launchDsh(world, args, options)
  const code = await launch.exited
  return { code, stdout: launch.stdout(), stderr: launch.stderr() }
}

/** Runs `dsh <args>` that must succeed (a step that prepares a test): a failure names its stderr. */
export async function dshOk(world: World, args: string[], options: LaunchOptions = {}) {
  const result = await dsh(world, args, options)
  if (result.code !== 0) throw new Error(`dsh ${args.join(' ')} exited ${result.code}: ${result.stderr}`)
  return result
}

/** The stored events of a session, read from its JSONL file (the header line skipped). */
export function storedEvents(world: World, sessionId: string): { type: string; seq: number; data: any }[] {
  const file = sessionFile(world, sessionId)
  if (!file) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1)
    .map((line) => JSON.parse(line))
}

export function sessionFile(world: World, sessionId: string): string | undefined {
  const root = join(world.home, 'sessions')
  if (!existsSync(root)) return undefined
  for (const key of readdirSync(root)) {
    const file = join(root, key, sessionId, 'session.jsonl')
    if (existsSync(file)) return file
  }
  return undefined
}

/** The ids of every stored session, from the session folders (independent of `dsh sessions list`). */
export function storedSessionIds(world: World): string[] {
  const root = join(world.home, 'sessions')
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((key) =>
    readdirSync(join(root, key)).filter((id) => existsSync(join(root, key, id, 'session.jsonl'))),
  )
}

/** Polls until `condition` holds (the child's progress is only visible in files and streams). */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The text of the chat messages a recorded DeepSeek request carried, role by role. */
export function conversation(body: any): string[] {
  return (
    (body?.messages ?? [])
      .filter((message: any) => message.role !== 'system')
      // The runtime context (@dsh/runtime-context) is not part of the conversation these tests follow.
      .filter(
        (message: any) =>
          !(
            message.role === 'user' &&
            typeof message.content === 'string' &&
            message.content.startsWith('Runtime context (')
          ),
      )
      .map(
        (message: any) =>
          `${message.role}: ${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)}`,
      )
  )
}
