import type { ToolScope } from '@dsh/acp'
import type { ConfineOptions, Confinement } from '@dsh/sandbox'
import Schema from '@dsh/schemastery'
import { BashConfig, BashShell } from '@dsh/bash-kit'
import type { ShellResult, ShellRunOptions } from '@dsh/shell'
import type {} from '@dsh/subprocess'

export interface Config extends BashConfig {
  envProgram: string
}

export const Config: Schema<Partial<Config>, Config> = Schema.intersect([
  BashConfig,
  Schema.object({
    envProgram: Schema.string()
      .default('/usr/bin/env')
      .description(
        'The `env` the editor runs to start a command with exactly the scrubbed environment (`env -i -- NAME=value … command`).',
      ),
  }),
]) as any

/**
 * ctx.shell for editor sessions (docs/architecture.md, "Surfaces"): while a tool runs for an ACP session whose editor offers
 * terminals, a one-shot command runs in a terminal of the editor, shown live as the tool call's output; the
 * argv is confined by ctx.sandbox first, exactly as a local command would be, so the editor runs the
 * bubblewrapped command. Persistent sessions and every command outside an editor session run locally.
 */
export default class EditorShell extends BashShell {
  static override inject = ['subprocess', 'sandbox', 'acp']
  static Config = Config
  declare config: Config

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
    const { argv, enforcement } = await this.wrap([this.config.bash, '-c', command], {
      cwd: options.cwd,
      authority: options.authority,
    })
    const started = Date.now()
    // The editor's terminal would start the command with the editor's whole environment: `env -i` replaces
    // it with exactly the one ctx.subprocess gives a local child (docs/security.md), so no key of the editor's leaks.
    const { env } = this.ctx.subprocess.environment(this.variables(options.env))
    const assignments = Object.entries(env).map(([name, value]) => `${name}=${value}`)
    const terminal = await this.ctx.acp.createTerminal({
      sessionId: scope.sessionId,
      command: this.config.envProgram,
      args: ['-i', '--', ...assignments, ...argv],
      cwd: options.cwd,
      env: [],
      outputByteLimit: this.config.outputCapBytes,
    })
    try {
      await this.ctx.acp.showTerminal(scope, terminal.id)
      let timedOut = false
      let aborted = false
      let giveUpLater!: () => void
      const gaveUp = new Promise<undefined>(
        (resolve) => (giveUpLater = () => void setTimeout(resolve, this.config.interruptGraceMs, undefined).unref()),
      )
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
        return {
          exitCode: exit?.exitCode ?? null,
          signal: exit?.signal ?? null,
          output,
          truncated,
          timedOut,
          aborted,
          enforcement,
          durationMs: Date.now() - started,
        }
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
