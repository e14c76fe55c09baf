import { type Context, Service } from '@dsh/cordis'
import type { Enforcement, SandboxAuthority } from '@dsh/sandbox'

/** Where a command's whole output was saved once it passed the cap (see `ShellRunOptions.fullOutputPath`). */
export interface SavedOutput {
  path: string
  /** Bytes in the file: the output exactly, unless `complete` is false. */
  bytes: number
  /** False when the output passed the provider's ceiling (the file holds its first `bytes`) or the file failed. */
  complete: boolean
  failure?: string
}

/** One command's outcome, as every shell provider reports it. */
export interface ShellResult {
  /** The command's status, or null when it was killed before reporting one. */
  exitCode: number | null
  /** The signal that ended it, or null. */
  signal: string | null
  /** stdout and stderr interleaved, capped (see `truncated`). */
  output: string
  truncated: boolean
  /** Set when the output passed the cap and the caller gave `fullOutputPath`: every byte is there. */
  saved?: SavedOutput
  timedOut: boolean
  /** The caller's AbortSignal ended it. */
  aborted: boolean
  /** What confinement actually applied (see @dsh/sandbox). */
  enforcement: Enforcement
  durationMs: number
}

export interface ShellRunOptions {
  cwd: string
  /** Deadline (default: the provider's Config). */
  timeoutMs?: number
  signal: AbortSignal
  /** The authority in force for this command; a provider that confines must refuse what it cannot confine. */
  authority: SandboxAuthority
  /** Variables added to the environment. */
  env?: Record<string, string>
  /** Past the cap, the whole output streams to this file (bounded by the provider's ceiling). */
  fullOutputPath?: string
  /**
   * The command's output as it arrives (terminal line ends and escape sequences as printed), for a live
   * display; the result still carries the capped output. A provider that cannot stream leaves it uncalled.
   */
  onOutput?: (text: string) => void
}

export interface ShellSessionOptions {
  cwd: string
  /** Fixed for the session's life: a new authority needs a new session. */
  authority: SandboxAuthority
  env?: Record<string, string>
}

export interface SessionRunOptions {
  timeoutMs?: number
  signal: AbortSignal
  /** As in ShellRunOptions. */
  fullOutputPath?: string
  /** As in ShellRunOptions. */
  onOutput?: (text: string) => void
}

/** A persistent shell for one agent: `cd`, variables and functions carry over from one command to the next. */
export interface ShellSession {
  readonly enforcement: Enforcement
  /** Runs one command after the previous ones (calls queue). Rejects with ShellError SESSION_CLOSED once closed. */
  run(command: string, options: SessionRunOptions): Promise<ShellResult>
  /** The shell's working directory after the last command. */
  cwd(): string
  /** True once the shell has exited or been closed. */
  readonly closed: boolean
  /** Ends the shell and everything it started. Idempotent. */
  close(): Promise<void>
}

export interface ShellStartOptions {
  cwd: string
  /** The authority in force for this process's whole life; a provider that confines must refuse what it cannot confine. */
  authority: SandboxAuthority
  env?: Record<string, string>
}

export interface ShellExit {
  exitCode: number | null
  signal: string | null
}

/**
 * A command left running (a background job): output as it arrives, its end, and the kill. It leads its own
 * process group, so `terminate()` ends all it started.
 */
export interface ShellProcess {
  readonly pid: number
  readonly enforcement: Enforcement
  /** Output (stdout and stderr merged, as a terminal shows them) as it arrives. Returns the unsubscribe function. */
  onData(listener: (data: string) => void): () => void
  readonly exited: Promise<ShellExit>
  /** The kill ladder on the whole group (SIGTERM, then SIGKILL); resolves once it is gone. Idempotent. */
  terminate(): Promise<ShellExit>
}

export type ShellErrorCode = 'SESSION_CLOSED' | 'SESSION_FAILED' | 'TIMEOUT'

/** A shell that cannot do what was asked: the session has ended, exited at start, or did not answer in time. */
export class ShellError extends Error {
  override name = 'ShellError'
  constructor(
    readonly code: ShellErrorCode,
    message: string,
  ) {
    super(message)
  }
}

declare module '@dsh/cordis' {
  interface Context {
    shell: Shell
  }
}

/**
 * Runs commands for an agent (docs/architecture.md, "Layers"). Owns: the execution of one command, and persistent shell sessions.
 * Must not own: what the model is told, whether a command is allowed (approval and the sandbox policy),
 * which authority is in force (callers pass it), or where long output is stored.
 */
export abstract class Shell extends Service {
  constructor(ctx: Context) {
    super(ctx, 'shell')
  }

  /** Runs `command` once. Rejects with SandboxError when the authority asks for confinement that cannot be had. */
  abstract run(command: string, options: ShellRunOptions): Promise<ShellResult>

  /**
   * Starts `command` and returns at once with the live process (no deadline: the caller ends it). Rejects
   * like run() when the authority cannot be confined; nothing runs then.
   */
  abstract start(command: string, options: ShellStartOptions): Promise<ShellProcess>

  /** Starts a persistent shell. Rejects like run(), or with ShellError TIMEOUT when the shell does not answer. */
  abstract openSession(options: ShellSessionOptions): Promise<ShellSession>
}
