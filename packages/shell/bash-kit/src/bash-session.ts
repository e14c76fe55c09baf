import { randomBytes } from 'node:crypto'
import type { Enforcement } from '@dsh/sandbox'
import type { PtyExit, PtyProcess } from '@dsh/subprocess'
import { CappedOutput, type FullOutputTarget, type SavedOutput } from '@dsh/subprocess-kit'
import { commandLines, findMarker, markerLine, undecidedTail } from './session-protocol.ts'
import { ShellError, type SessionRunOptions, type ShellResult, type ShellSession } from '@dsh/shell'

export interface SessionLimits {
  timeoutMs: number
  outputCapBytes: number
  /** At most this many bytes of a command's whole output are saved when a caller asks for them. */
  fullOutputCeilingBytes: number
  /** How long an interrupted command has to give the prompt back before the whole session is killed. */
  interruptGraceMs: number
  /** How long a new shell has to answer its first marker. */
  sessionStartTimeoutMs: number
}

interface End {
  status: number | null
  signal: string | null
  output: string
  truncated: boolean
  saved?: SavedOutput
}

/** The command in flight: the markers that end it (its own, and one per interrupt) and its output so far. */
class InFlight {
  readonly seqs: Set<number>
  readonly output: CappedOutput
  readonly done: Promise<End>
  private resolve!: (end: End) => void

  constructor(
    readonly seq: number,
    capBytes: number,
    full?: FullOutputTarget,
    onOutput?: (text: string) => void,
  ) {
    this.seqs = new Set([seq])
    this.output = new CappedOutput(capBytes, full, onOutput)
    this.done = new Promise((resolve) => (this.resolve = resolve))
  }

  finish(status: number | null, signal: string | null) {
    const saved = this.output.saved()
    this.resolve({
      status,
      signal,
      output: this.output.text().replace(/\r\n/g, '\n'),
      truncated: this.output.truncated,
      ...(saved ? { saved } : {}),
    })
  }
}

/**
 * One bash on a terminal, driven by the marker protocol (session-protocol.ts). bash runs interactive
 * without line editing, with echo off and empty prompts. Job control stays on so that Ctrl-C (our
 * interrupt at a deadline or an abort) reaches only the foreground command, never the shell itself nor a
 * sandbox wrapping it.
 */
export class BashSession implements ShellSession {
  private readonly nonce = `DSH${randomBytes(8).toString('hex')}`
  private seq = 0
  private text = ''
  private inFlight?: InFlight
  /** Markers of finished commands still to come (an interrupt's, when the command ended by itself). */
  private stale = new Set<number>()
  private queue: Promise<unknown> = Promise.resolve()
  private currentCwd: string
  private exit?: PtyExit
  private closing?: Promise<void>

  private constructor(
    private readonly terminal: PtyProcess,
    readonly enforcement: Enforcement,
    private readonly limits: SessionLimits,
    cwd: string,
  ) {
    this.currentCwd = cwd
    terminal.onData((data) => this.receive(data))
    void terminal.exited.then((exit) => {
      this.exit = exit
      const command = this.inFlight
      this.inFlight = undefined
      command?.output.push(this.text)
      command?.finish(exit.exitCode, exit.signal)
    })
  }

  /** Takes over a freshly spawned interactive bash and waits for its first marker. */
  static async start(
    terminal: PtyProcess,
    enforcement: Enforcement,
    limits: SessionLimits,
    cwd: string,
  ): Promise<BashSession> {
    const session = new BashSession(terminal, enforcement, limits, cwd)
    const ready = session.begin()
    const setup = 'stty -echo 2>/dev/null; set +o history; unset HISTFILE; PS1=; PS2=; PS0=; PROMPT_COMMAND='
    terminal.write(`${setup}; ${markerLine(session.nonce, ready.seq)}\n`)
    let late = false
    const timer = setTimeout(() => {
      late = true
      void terminal.terminate()
    }, limits.sessionStartTimeoutMs)
    const end = await ready.done
    clearTimeout(timer)
    if (late) throw new ShellError('TIMEOUT', `the shell did not answer within ${limits.sessionStartTimeoutMs} ms`)
    if (session.exit)
      throw new ShellError(
        'SESSION_FAILED',
        `the shell exited at start (${session.exit.signal ?? `status ${session.exit.exitCode}`}): ${end.output.trim()}`,
      )
    return session
  }

  get closed(): boolean {
    return this.exit !== undefined || this.closing !== undefined
  }

  cwd(): string {
    return this.currentCwd
  }

  run(command: string, options: SessionRunOptions): Promise<ShellResult> {
    const next = this.queue.then(() => this.runNow(command, options))
    this.queue = next.catch(() => {})
    return next
  }

  close(): Promise<void> {
    return (this.closing ??= this.hangUp())
  }

  /** Like closing a terminal window: SIGHUP (bash passes it on to its jobs), then the kill ladder on the group. */
  private async hangUp() {
    if (!this.exit) {
      this.terminal.signal('SIGHUP')
      await Promise.race([
        this.terminal.exited,
        new Promise((resolve) => setTimeout(resolve, this.limits.interruptGraceMs)),
      ])
    }
    await this.terminal.terminate()
  }

  private async runNow(command: string, options: SessionRunOptions): Promise<ShellResult> {
    if (this.closed) throw new ShellError('SESSION_CLOSED', 'the shell session has ended; open a new one')
    if (options.signal.aborted)
      return {
        exitCode: null,
        signal: null,
        output: '',
        truncated: false,
        timedOut: false,
        aborted: true,
        enforcement: this.enforcement,
        durationMs: 0,
      }
    const started = performance.now()
    const running = this.begin(
      options.fullOutputPath
        ? { path: options.fullOutputPath, ceilingBytes: this.limits.fullOutputCeilingBytes, fromTerminal: true }
        : undefined,
      options.onOutput,
    )
    let timedOut = false
    let aborted = false
    let interrupted = false
    let grace: NodeJS.Timeout | undefined
    const interrupt = () => {
      if (interrupted) return
      interrupted = true
      // Ctrl-C ends the foreground job and bash drops the rest of its line, so a fresh marker line reports
      // once the prompt is back. A command that ignores SIGINT costs the session after the grace.
      const again = this.seq++
      running.seqs.add(again)
      this.terminal.write('\x03')
      this.terminal.write(`${markerLine(this.nonce, again)}\n`)
      grace = setTimeout(() => void (this.inFlight === running && this.close()), this.limits.interruptGraceMs)
    }
    const timer = setTimeout(() => {
      timedOut = !interrupted
      interrupt()
    }, options.timeoutMs ?? this.limits.timeoutMs)
    const onAbort = () => {
      aborted = !interrupted
      interrupt()
    }
    options.signal.addEventListener('abort', onAbort, { once: true })
    for (const line of commandLines(command, this.nonce, running.seq)) this.terminal.write(line + '\n')
    const end = await running.done
    clearTimeout(timer)
    clearTimeout(grace)
    options.signal.removeEventListener('abort', onAbort)
    return {
      exitCode: end.status,
      signal: end.signal,
      output: end.output,
      truncated: end.truncated,
      ...(end.saved ? { saved: end.saved } : {}),
      timedOut,
      aborted,
      enforcement: this.enforcement,
      durationMs: Math.round(performance.now() - started),
    }
  }

  /** Makes the next sequence number the command in flight. */
  private begin(full?: FullOutputTarget, onOutput?: (text: string) => void): InFlight {
    this.inFlight = new InFlight(this.seq++, this.limits.outputCapBytes, full, onOutput)
    return this.inFlight
  }

  private receive(data: string) {
    this.text += data
    for (let marker = findMarker(this.text, this.nonce); marker; marker = findMarker(this.text, this.nonce)) {
      const command = this.inFlight
      command?.output.push(this.text.slice(0, marker.start))
      this.text = this.text.slice(marker.end)
      if (this.stale.delete(marker.seq) || !command?.seqs.has(marker.seq)) continue
      this.inFlight = undefined
      for (const other of command.seqs) if (other > marker.seq) this.stale.add(other) // lines run in order: only later markers can still come
      this.currentCwd = marker.cwd
      command.finish(marker.status, null)
    }
    const keep = undecidedTail(this.text, this.nonce)
    if (this.text.length > keep) {
      this.inFlight?.output.push(this.text.slice(0, this.text.length - keep))
      this.text = this.text.slice(this.text.length - keep)
    }
  }
}
