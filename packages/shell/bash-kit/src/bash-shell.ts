import type { Context } from '@dsh/cordis'
import type { ConfineOptions, Confinement } from '@dsh/sandbox'
import Schema from '@dsh/schemastery'
import { BashSession } from './bash-session.ts'
import {
  Shell,
  type ShellProcess,
  type ShellResult,
  type ShellRunOptions,
  type ShellSession,
  type ShellSessionOptions,
  type ShellStartOptions,
} from '@dsh/shell'

export interface BashConfig {
  timeoutMs: number
  outputCapBytes: number
  fullOutputCeilingBytes: number
  bash: string
  env: Record<string, string>
  interruptGraceMs: number
  sessionStartTimeoutMs: number
}

/** The Config both bash providers share. */
export const BashConfig: Schema<Partial<BashConfig>, BashConfig> = Schema.object({
  timeoutMs: Schema.natural()
    .min(1)
    .default(120_000)
    .description('Deadline of one command when the caller gives none (ms).'),
  outputCapBytes: Schema.natural()
    .min(1)
    .default(50_000)
    .description('Output bytes kept per command; beyond it the head and the tail are kept with a note of the cut.'),
  fullOutputCeilingBytes: Schema.natural()
    .min(1)
    .default(100 * 1024 * 1024)
    .description(
      'When a caller asks for the whole output of a command past the cap (a spill file), at most this many bytes are saved.',
    ),
  bash: Schema.string().default('bash').description('The bash executable (looked up on PATH).'),
  env: Schema.dict(Schema.string())
    .default({ PAGER: 'cat', GIT_PAGER: 'cat' })
    .description("Variables set for every command (the caller's env wins). Pagers are off: nobody can press q."),
  interruptGraceMs: Schema.natural()
    .default(2_000)
    .description(
      'In a session, how long an interrupted command has to give the prompt back before the session is killed (ms).',
    ),
  sessionStartTimeoutMs: Schema.natural()
    .min(1)
    .default(10_000)
    .description('How long a new session shell has to answer (ms).'),
})

/**
 * The bash driver both bash providers share (they may not depend on each other, so it lives with the
 * definition): one command as `bash -c` over ctx.subprocess pipes, a session as an interactive bash on a
 * ctx.subprocess terminal. A provider says only how an argv is wrapped for an authority.
 */
export abstract class BashShell extends Shell {
  static inject = ['subprocess']
  private readonly sessions = new Set<ShellSession>()

  constructor(
    ctx: Context,
    public config: BashConfig,
  ) {
    super(ctx)
    ctx.effect(
      () => () => Promise.all([...this.sessions].map((session) => session.close())).then(() => {}),
      'close shell sessions',
    )
  }

  /** Wraps a bash argv for the authority (identity when unconfined); throws to refuse. */
  protected abstract wrap(argv: string[], options: ConfineOptions): Promise<Confinement>

  /**
   * The variables this shell adds for a command: its config's, then the caller's. They are only added: the
   * base is ctx.subprocess's scrubbed environment, never this process's (docs/security.md), and the subprocess
   * seam drops secret-looking names from these too.
   */
  protected variables(extra: Record<string, string> | undefined): Record<string, string> {
    return { ...this.config.env, ...extra }
  }

  async run(command: string, options: ShellRunOptions): Promise<ShellResult> {
    const { argv, enforcement } = await this.wrap([this.config.bash, '-c', command], {
      cwd: options.cwd,
      authority: options.authority,
    })
    const result = await this.ctx.subprocess.run(argv, {
      cwd: options.cwd,
      env: this.variables(options.env),
      timeoutMs: options.timeoutMs ?? this.config.timeoutMs,
      outputCapBytes: this.config.outputCapBytes,
      ...(options.fullOutputPath
        ? { fullOutput: { path: options.fullOutputPath, ceilingBytes: this.config.fullOutputCeilingBytes } }
        : {}),
      signal: options.signal,
      ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    })
    return { ...result, enforcement }
  }

  /**
   * A background command: `bash -c` on a terminal (so programs line-buffer their output and a hang-up reaches
   * them), wrapped for the authority like a session's shell. The terminal child leads its own process group.
   */
  async start(command: string, options: ShellStartOptions): Promise<ShellProcess> {
    const { argv, enforcement } = await this.wrap([this.config.bash, '-c', command], {
      cwd: options.cwd,
      authority: options.authority,
      terminal: true,
    })
    const terminal = await this.ctx.subprocess.openPty(argv, { cwd: options.cwd, env: this.variables(options.env) })
    return {
      pid: terminal.pid,
      enforcement,
      onData: (listener) => terminal.onData(listener),
      exited: terminal.exited,
      terminate: () => terminal.terminate(),
    }
  }

  async openSession(options: ShellSessionOptions): Promise<ShellSession> {
    const bash = [this.config.bash, '--noprofile', '--norc', '--noediting', '-i']
    const { argv, enforcement } = await this.wrap(bash, {
      cwd: options.cwd,
      authority: options.authority,
      terminal: true,
    })
    // Empty prompts from the first byte, so nothing but our markers and the commands' output comes back.
    const env = { ...this.variables(options.env), PS1: '', PS2: '', PROMPT_COMMAND: '' }
    const terminal = await this.ctx.subprocess.openPty(argv, { cwd: options.cwd, env })
    const session = await BashSession.start(terminal, enforcement, this.config, options.cwd)
    this.sessions.add(session)
    void terminal.exited.then(() => this.sessions.delete(session))
    return session
  }
}
