import type { ToolScope } from '@dsh/acp'
import type { ConfineOptions, Confinement } from '@dsh/sandbox'
import { BashConfig, BashShell } from '@dsh/bash-kit'
import type { ShellResult, ShellRunOptions } from '@dsh/shell'

export type Config = BashConfig

/**
 * ctx.shell for editor sessions (DESIGN §10): while a tool runs for an ACP session whose editor offers
 * terminals, a one-shot command runs in a terminal of the editor, shown live as the tool call's output; the
 * argv is confined by ctx.sandbox first, exactly as a local command would be, so the editor runs the
 * bubblewrapped command. Persistent sessions and every command outside an editor session run locally.
 */
export default class EditorShell extends BashShell {
  static override inject = ['subprocess', 'sandbox', 'acp']
  static Config = BashConfig

  protected wrap(argv: string[], options: ConfineOptions): Promise<Confinement> {
    return this.ctx.sandbox.confine(argv, options)
  }

  override async run(command: string, options: ShellRunOptions): Promise<ShellResult> {
    const scope = this.ctx.acp.toolScope()
    if (!scope || !this.ctx.acp.hasTerminal) return super.run(command, options)
    return this.runInEditor(scope, command, options)
  }

  private async runInEditor(scope: ToolScope, command: string, options: ShellRunOptions): Promise<ShellResult> {
    // Confined (or refused) before the editor is asked to run anything.
    const { argv, enforcement } = await this.wrap([this.config.bash, '-c', command], { cwd: options.cwd, authority: options.authority })
    const started = Date.now()
    const env = { ...this.config.env, ...options.env }
    const terminal = await this.ctx.acp.createTerminal({
      sessionId: scope.sessionId,
      command: argv[0]!,
      args: argv.slice(1),
      cwd: options.cwd,
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
      outputByteLimit: this.config.outputCapBytes,
    })
    try {
      await this.ctx.acp.showTerminal(scope, terminal.id)
      let timedOut = false
      let aborted = false
      let giveUpLater!: () => void
      const gaveUp = new Promise<undefined>((resolve) => (giveUpLater = () => void setTimeout(resolve, this.config.interruptGraceMs, undefined).unref()))
      const stop = (why: 'timeout' | 'abort') => {
        if (why === 'timeout') timedOut = true
        else aborted = true
        void terminal.kill().catch(() => {})
        // An editor that never reports the killed command's exit must not hold the call: give up after a grace.
        giveUpLater()
      }
      const onAbort = () => stop('abort')
      if (options.signal.aborted) onAbort()
      else options.signal.addEventListener('abort', onAbort, { once: true })
      const timer = setTimeout(() => stop('timeout'), options.timeoutMs ?? this.config.timeoutMs)
      try {
        const exit = await Promise.race([terminal.waitForExit(), gaveUp])
        const { output, truncated } = await terminal.currentOutput()
        return { exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null, output, truncated, timedOut, aborted, enforcement, durationMs: Date.now() - started }
      } finally {
        clearTimeout(timer)
        options.signal.removeEventListener('abort', onAbort)
      }
    } finally {
      // The tool call keeps showing the output after release.
      await terminal.release().catch(() => {})
    }
  }
}
