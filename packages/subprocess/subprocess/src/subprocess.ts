import { type Context, Service } from '@dsh/cordis'
import { EMPTY_POLICY, type EnvPolicy, scrubEnvironment, type ScrubbedEnvironment } from '@dsh/env-policy'

/** A file that receives a command's whole output once it passes the cap (see `RunOptions.fullOutput`). */
export interface FullOutputTarget {
  path: string
  /** At most this many bytes are written. */
  ceilingBytes: number
  /** Output read from a terminal: CRLF is written as LF (set by the provider for a PTY run). */
  fromTerminal?: boolean
}

/** Where a command's whole output was saved. */
export interface SavedOutput {
  path: string
  /** Bytes in the file: the output exactly, unless `complete` is false. */
  bytes: number
  /** False when the output passed the ceiling (the file holds its first `bytes` bytes) or the file failed. */
  complete: boolean
  failure?: string
}

/** How one child is started and bounded. Omitted limits fall back to the provider's Config. */
export interface RunOptions {
  /** Working directory; it must exist (checked before anything is spawned). */
  cwd: string
  /** Variables added to the policy's environment (see `Subprocess.environment`); secret-looking and excluded names are dropped. */
  env?: Record<string, string | undefined>
  /** Deadline; at it the child's process group is killed (SIGTERM, then SIGKILL after the grace). */
  timeoutMs?: number
  /** Output bytes kept; beyond it the head and the tail are kept with a note of what was cut. */
  outputCapBytes?: number
  /**
   * Past the cap, stream the whole output (what came before included) to this file as it arrives, so the
   * bytes the cap cuts stay readable. Nothing is written for an output under the cap.
   */
  fullOutput?: FullOutputTarget
  /** Aborting kills the child's process group the same way a deadline does. */
  signal?: AbortSignal
  /** Attach the child to a fresh pseudo-terminal instead of pipes (stdout and stderr then arrive merged). */
  pty?: boolean
  /** Written to stdin, which is then closed (pipes only; without it stdin is empty). */
  input?: string
  /**
   * `separate`: stderr is kept apart in `RunResult.stderr` (capped alike) and `output` is stdout alone, for
   * callers that read a protocol on stdout (hooks). Default `merged` (pipes only).
   */
  stderr?: 'merged' | 'separate'
  /**
   * Output handed on as it arrives (decoded text; stdout and stderr merged, or stdout alone with `stderr:
   * 'separate'`; a terminal's line ends as it sends them), for a live display. Not capped: the caller
   * bounds what it keeps. The result still carries the capped output.
   */
  onOutput?: (text: string) => void
}

/** One child's outcome. Output is stdout and stderr interleaved in arrival order. */
export interface RunResult {
  /** The exit status, or null when a signal ended the child. */
  exitCode: number | null
  /** The signal that ended the child (`SIGKILL`, …), or null. */
  signal: string | null
  output: string
  /** stderr, when the run asked for it `separate` (then `output` is stdout only). */
  stderr?: string
  /** True when `output` (or `stderr`) lost bytes to the cap (the note inside says how many). */
  truncated: boolean
  /** Set when the output passed the cap and `fullOutput` was asked for: where every byte is. */
  saved?: SavedOutput
  timedOut: boolean
  /** True when the caller's AbortSignal ended the run (the group was killed). */
  aborted: boolean
  durationMs: number
}

export interface PtyOptions {
  cwd: string
  /** As in RunOptions: added to the policy's environment, secret-looking and excluded names dropped. */
  env?: Record<string, string | undefined>
  cols?: number
  rows?: number
}

export interface PtyExit {
  exitCode: number | null
  signal: string | null
}

/** A long-lived child on a pseudo-terminal (a persistent shell). It is the leader of its own process group. */
export interface PtyProcess {
  readonly pid: number
  write(data: string): void
  /** Terminal output as it arrives (CRLF as the terminal sends it). Returns the unsubscribe function. */
  onData(listener: (data: string) => void): () => void
  readonly exited: Promise<PtyExit>
  /** Sends `signal` to the child alone (not its group), e.g. SIGHUP so a shell hangs up its jobs. */
  signal(signal: NodeJS.Signals): void
  /** The kill ladder on the whole group: SIGTERM, then SIGKILL after the grace. Resolves once it is gone. */
  terminate(): Promise<PtyExit>
}

export type SubprocessErrorCode = 'SPAWN_FAILED'

/** A child that could not be started at all; the message names the program and the directory. */
export class SubprocessError extends Error {
  override name = 'SubprocessError'
  constructor(
    readonly code: SubprocessErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

declare module '@dsh/cordis' {
  interface Context {
    subprocess: Subprocess
  }
}

/**
 * Runs child processes for the rest of the tree (docs/architecture.md, "Layers"). Owns: starting a child, bounding its output
 * and its time, and killing its whole process group. Must not own: which commands are allowed (approval),
 * confinement (ctx.sandbox wraps argv before it gets here), or what anyone is told about the result.
 * Every child a provider starts is an effect: disposing the provider kills the children still running.
 *
 * Every child gets `environment(options.env)`, never this process's whole environment (docs/security.md): a
 * prompt-injected `env` must not print the user's keys. The policy is supplied by a plugin (`usePolicy`,
 * e.g. @dsh/shell-env from the user's settings); without one the default applies (the allow-list only).
 * A caller that hands an argv to someone else to run (an editor's terminal) asks `environment()` itself.
 */
export abstract class Subprocess extends Service {
  private readonly policies: (() => EnvPolicy)[] = []

  constructor(ctx: Context) {
    super(ctx, 'subprocess')
  }

  /** Supplies the environment policy for as long as `ctx` lives (the most recent supplier wins). */
  usePolicy(ctx: Context, supply: () => EnvPolicy): void {
    ctx.effect(() => {
      this.policies.push(supply)
      return () => void this.policies.splice(this.policies.indexOf(supply), 1)
    }, 'environment policy')
  }

  /** The policy in force: the latest supplier's, else the default (inherit the allow-list only). */
  policy(): EnvPolicy {
    return this.policies.at(-1)?.() ?? EMPTY_POLICY
  }

  /** The environment a child started now gets: this process's, scrubbed by the policy, plus `extra`. */
  environment(extra?: Record<string, string | undefined>): ScrubbedEnvironment {
    return scrubEnvironment(process.env, this.policy(), extra)
  }

  /** Runs `argv` to completion. Resolves with the outcome (timeouts and aborts included); rejects only with SubprocessError when it cannot start. */
  abstract run(argv: string[], options: RunOptions): Promise<RunResult>

  /** Starts `argv` on a pseudo-terminal and hands back the live process. Rejects with SubprocessError when it cannot start. */
  abstract openPty(argv: string[], options: PtyOptions): Promise<PtyProcess>
}
