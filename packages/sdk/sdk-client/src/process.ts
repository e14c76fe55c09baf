import { spawn, type ChildProcess } from 'node:child_process'
import { LineSplitter } from '@dsh/jsonrpc-lines'
import { DshError } from './errors.ts'
import type { RuntimeCommand } from './find.ts'

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** How long each step of `close()` may take before the next, harder one. */
export interface CloseTimeouts {
  /** After the `shutdown` request: the runtime cancels turns, flushes logs and exits. */
  shutdownMs: number
  /** After closing stdin (EOF), which the runtime also treats as shutdown. */
  eofMs: number
  /** After SIGTERM; SIGKILL follows. */
  termMs: number
}

export const CLOSE_DEFAULTS: CloseTimeouts = { shutdownMs: 5_000, eofMs: 2_000, termMs: 2_000 }

/** The framing's defaults: a line as long as any reply a client should hold in memory, and a short quote. */
export const LINE_DEFAULTS = { maxLineBytes: 256 * 1024 * 1024, excerptChars: 120 }

/** Which step of the escalation ended the process. */
export type CloseStage = 'shutdown' | 'eof' | 'sigterm' | 'sigkill' | 'already-exited'

export interface SpawnOptions {
  cwd?: string
  env: NodeJS.ProcessEnv
  /** `pipe` keeps the last `stderrTailBytes` for error messages; a function also receives every chunk. */
  stderr: 'pipe' | 'inherit' | ((text: string) => void)
  stderrTailBytes: number
  /** Longest line (one message) read from the runtime (default 256 MiB); a longer one closes the connection (PROTOCOL_ERROR). */
  maxLineBytes?: number
  /** Characters of an unreadable line quoted in an error (default 120). */
  excerptChars?: number
  /** Where protocol problems nobody can be told about go (a reply we could not read); default: nowhere. */
  onWarning?: (message: string) => void
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/** The runtime child process: spawned, read line by line, closed by escalation. */
export class RuntimeProcess {
  readonly exited: Promise<Exit>
  private tail = ''
  /** The runtime's own failure lines (`dsh: …` and their indented continuation), kept apart from warnings. */
  private failures = ''
  private partial = ''
  private inFailure = false
  private exit: Exit | undefined
  private lineListener: (line: string) => void = () => {}
  private unreadableListener: (problem: string) => void = () => {}
  readonly excerptChars: number

  private constructor(
    readonly child: ChildProcess,
    options: SpawnOptions,
  ) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal }
        resolve(this.exit)
      }),
    )
    this.excerptChars = options.excerptChars ?? LINE_DEFAULTS.excerptChars
    this.warn = options.onWarning ?? (() => {})
    // The framing the runtime reads with, on bytes: a limit means bytes, a split UTF-8 character stays whole.
    const splitter = new LineSplitter(options.maxLineBytes ?? LINE_DEFAULTS.maxLineBytes, this.excerptChars, {
      line: (text) => this.lineListener(text),
      tooLong: (start, limit) =>
        this.unreadableListener(`a line longer than ${limit} bytes (maxLineBytes), starting ${JSON.stringify(start)}`),
    })
    child.stdout!.on('data', (chunk: Buffer) => splitter.push(chunk))
    child.stdout!.on('end', () => splitter.end())
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      this.tail = (this.tail + chunk).slice(-options.stderrTailBytes)
      this.keepFailures(chunk, options.stderrTailBytes)
      if (typeof options.stderr === 'function') options.stderr(chunk)
    })
    // A write to a runtime that just died fails with EPIPE: the exit is reported through `exited` instead.
    child.stdin!.on('error', () => {})
  }

  /** Starts the runtime. A command that cannot be executed is RUNTIME_NOT_FOUND. */
  static async spawn(command: RuntimeCommand, args: string[], options: SpawnOptions): Promise<RuntimeProcess> {
    const child = spawn(command.file, [...command.args, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', options.stderr === 'inherit' ? 'inherit' : 'pipe'],
    })
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new DshError(
            'RUNTIME_NOT_FOUND',
            `cannot start the dsh runtime "${command.file}": ${error.code === 'ENOENT' ? 'no such file' : error.code === 'EACCES' ? 'not executable' : error.message}`,
          ),
        ),
      )
    })
    return new RuntimeProcess(child, options)
  }

  get running(): boolean {
    return this.exit === undefined
  }

  onLine(listener: (line: string) => void): void {
    this.lineListener = listener
  }

  /** Called when the runtime writes something the framing cannot deliver (a line over the limit). */
  onUnreadable(listener: (problem: string) => void): void {
    this.unreadableListener = listener
  }

  /** Reports a protocol problem nobody can be told about over the connection. */
  readonly warn: (message: string) => void

  write(line: string): void {
    if (this.running && this.child.stdin!.writable) this.child.stdin!.write(line + '\n')
  }

  /** The end of what the runtime wrote to stderr (for error messages). */
  stderrTail(): string {
    return this.tail.trim()
  }

  /**
   * What an error message quotes: the runtime's failure lines (the launcher and the surfaces write them as
   * `dsh: …`), so warnings written after them (a plugin's, the protocol's) cannot push them out; else the tail.
   */
  stderrQuote(): { failures: boolean; text: string } {
    const pending = this.partial.startsWith('dsh: ') || (this.inFailure && /^\s/.test(this.partial))
    const failures = (this.failures + (pending ? this.partial : '')).trim()
    return failures ? { failures: true, text: failures } : { failures: false, text: this.stderrTail() }
  }

  private keepFailures(chunk: string, limit: number): void {
    const lines = (this.partial + chunk).split('\n')
    this.partial = lines.pop()!
    for (const line of lines) {
      this.inFailure = line.startsWith('dsh: ') || (this.inFailure && /^\s/.test(line))
      if (this.inFailure) this.failures = (this.failures + line + '\n').slice(-limit)
    }
  }

  describeExit(exit: Exit | undefined = this.exit): string {
    const how = !exit
      ? 'is still running'
      : exit.signal
        ? `was killed by ${exit.signal}`
        : `exited with code ${exit.code}`
    const quote = this.stderrQuote()
    if (!quote.text) return `the dsh runtime ${how}`
    return `the dsh runtime ${how}; ${quote.failures ? 'it reported on stderr' : 'its stderr ends with'}:\n${quote.text}`
  }

  /** Ends the runtime: shutdown request, then EOF, then SIGTERM, then SIGKILL, each after the last timed out. */
  async close(shutdown: () => void, timeouts: CloseTimeouts): Promise<Exit & { stage: CloseStage }> {
    if (!this.running) return { ...this.exit!, stage: 'already-exited' }
    const steps: [CloseStage, () => void, number][] = [
      ['shutdown', shutdown, timeouts.shutdownMs],
      ['eof', () => this.child.stdin!.end(), timeouts.eofMs],
      ['sigterm', () => this.child.kill('SIGTERM'), timeouts.termMs],
    ]
    for (const [stage, act, ms] of steps) {
      act()
      const exit = await Promise.race([this.exited, wait(ms).then(() => undefined)])
      if (exit) return { ...exit, stage }
    }
    this.child.kill('SIGKILL')
    return { ...(await this.exited), stage: 'sigkill' }
  }
}
