import { statSync } from 'node:fs'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import {
  Subprocess,
  SubprocessError,
  type PtyOptions,
  type PtyProcess,
  type RunOptions,
  type RunResult,
} from '@dsh/subprocess'
import type { LiveRun, RunLimits } from './limits.ts'
import { runPipes } from './run-pipes.ts'
import { openTerminal, runOnTerminal, type TerminalSize } from './pty.ts'

export interface Config {
  timeoutMs: number
  outputCapBytes: number
  killGraceMs: number
  groupPollMs: number
  terminal: TerminalSize
}

const Terminal: Schema<TerminalSize> = Schema.object({
  cols: Schema.natural().min(1).default(120).description('Columns of a new pseudo-terminal.'),
  rows: Schema.natural().min(1).default(40).description('Rows of a new pseudo-terminal.'),
  name: Schema.string().default('xterm-256color').description('TERM of a new pseudo-terminal.'),
})

function assertDirectory(cwd: string, program: string | undefined) {
  let isDirectory = false
  try {
    isDirectory = statSync(cwd).isDirectory()
  } catch {}
  if (!isDirectory)
    throw new SubprocessError(
      'SPAWN_FAILED',
      `cannot start "${program}": working directory ${cwd} does not exist or is not a directory`,
    )
}

/**
 * ctx.subprocess on this machine: pipes through child_process, terminals through node-pty. Every child is
 * the leader of its own process group, so a deadline, an abort or disposal kills all it started.
 */
export default class SubprocessLocal extends Subprocess {
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    timeoutMs: Schema.natural().min(1).default(120_000).description('Deadline of a run whose caller gives none (ms).'),
    outputCapBytes: Schema.natural()
      .min(1)
      .default(50_000)
      .description('Output bytes kept when the caller gives no cap; beyond it head and tail are kept.'),
    killGraceMs: Schema.natural()
      .default(2_000)
      .description('Time a process group has between SIGTERM and SIGKILL (ms).'),
    groupPollMs: Schema.natural().min(1).default(25).description('How often a dying process group is checked (ms).'),
    terminal: Terminal.default({} as TerminalSize).description('Size and type of new pseudo-terminals.'),
  })

  private readonly live = new Set<LiveRun>()

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx)
    ctx.effect(
      () => () => Promise.all([...this.live].map((run) => run.terminate())).then(() => {}),
      'kill running children',
    )
  }

  async run(argv: string[], options: RunOptions): Promise<RunResult> {
    if (!argv.length) throw new SubprocessError('SPAWN_FAILED', 'cannot start an empty argv')
    assertDirectory(options.cwd, argv[0])
    if (options.signal?.aborted)
      return {
        exitCode: null,
        signal: null,
        output: '',
        truncated: false,
        timedOut: false,
        aborted: true,
        durationMs: 0,
      }
    const limits: RunLimits = {
      timeoutMs: options.timeoutMs ?? this.config.timeoutMs,
      outputCapBytes: options.outputCapBytes ?? this.config.outputCapBytes,
      killGraceMs: this.config.killGraceMs,
      groupPollMs: this.config.groupPollMs,
    }
    const live: LiveRun = { terminate: async () => {} }
    this.live.add(live)
    const scrubbed = { ...options, env: this.environment(options.env).env }
    try {
      return await (options.pty
        ? runOnTerminal(argv, scrubbed, this.config.terminal, limits, live)
        : runPipes(argv, scrubbed, limits, live))
    } finally {
      this.live.delete(live)
    }
  }

  async openPty(argv: string[], options: PtyOptions): Promise<PtyProcess> {
    if (!argv.length) throw new SubprocessError('SPAWN_FAILED', 'cannot start an empty argv')
    assertDirectory(options.cwd, argv[0])
    const size = {
      ...this.config.terminal,
      ...(options.cols && { cols: options.cols }),
      ...(options.rows && { rows: options.rows }),
    }
    const terminal = openTerminal(argv, options.cwd, this.environment(options.env).env, size, this.config)
    this.live.add(terminal)
    void terminal.exited.then(() => this.live.delete(terminal))
    return terminal
  }
}
