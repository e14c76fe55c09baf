import type {} from '@dsh/agent'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type { ShellSession } from '@dsh/shell'
import type { ToolContext } from '@dsh/tools'

interface Live {
  shell: ShellSession
  /** The authority the shell was opened with (a shell keeps it for life). */
  key: string
  /** Ends the shell and forgets the effect in the agent's scope. */
  release: () => unknown
}

/**
 * One persistent shell per agent, opened in the agent's scope so it ends with the agent. A shell is replaced
 * when it has exited or when the authority in force is no longer the one it was opened with; the new one
 * starts in the old one's directory, and the caller is told what was lost.
 */
export class AgentShells {
  private readonly live = new Map<string, Live>()

  constructor(private readonly ctx: Context) {
    ctx.effect(
      () => () => Promise.all([...this.live.values()].map((entry) => entry.release())).then(() => {}),
      'persistent shells',
    )
    // The agent's scope is where a shell belongs; the status event also ends it for an agent whose scope is
    // not available to tools (ToolContext.scope unset).
    ctx.on('agent/status', (agent, status) => {
      if (status === 'disposed') void this.live.get(agent.id)?.release()
    })
  }

  /** The agent's shell for `authority`, with notes about any shell that had to be replaced. */
  async get(context: ToolContext, authority: SandboxAuthority): Promise<{ shell: ShellSession; notes: string[] }> {
    const key = JSON.stringify(authority)
    const current = this.live.get(context.agentId)
    if (current && !current.shell.closed && current.key === key) return { shell: current.shell, notes: [] }
    const notes: string[] = []
    let cwd = context.cwd
    if (current) {
      const previous = current.shell.cwd()
      if (await this.ctx.fs.exists(previous)) cwd = previous
      const why = current.shell.closed ? 'The previous shell had exited' : `The sandbox mode is now ${authority.mode}`
      notes.push(`[${why}: a new shell was started in ${cwd}; variables and functions of the previous one are gone.]`)
      this.live.delete(context.agentId)
      await current.release()
    }
    const shell = await this.ctx.shell.openSession({ cwd, authority })
    const end = () => {
      if (this.live.get(context.agentId)?.shell === shell) this.live.delete(context.agentId)
      return shell.close()
    }
    const release = context.scope ? context.scope.effect(() => end, 'persistent bash shell') : end
    this.live.set(context.agentId, { shell, key, release })
    return { shell, notes }
  }

  /** The directory of the agent's shell, or undefined when it has none. */
  cwd(agentId: string): string | undefined {
    const current = this.live.get(agentId)
    return current && !current.shell.closed ? current.shell.cwd() : undefined
  }
}
