// Slash commands (DESIGN §4, interaction; docs/architecture.md, "Context").
import { type Context, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'

/** One slash command. `run` gets the text after the name (trimmed, possibly empty). */
export interface CommandDefinition {
  /** Lower-case letters, digits and dashes, without the slash (`compact`). */
  name: string
  /** One line for `/help` and for surfaces' completion lists. */
  description: string
  /** Returns what the surface shows the user (nothing is fine). Throw an error with a `code` to fail. */
  run(args: string, context: { agent: Agent }): Promise<string | void> | string | void
}

export type CommandOutcome = { handled: false } | { handled: true; name: string; output: string } | { handled: true; name: string; error: { code: string; message: string } }

declare module '@dsh/cordis' {
  interface Context {
    commands: Commands
  }
}

const NAME = /^[a-z][a-z0-9-]*$/
const LINE = /^\/([a-z][a-z0-9-]*)(?:\s+([\s\S]*))?$/

/**
 * Slash commands (D+P). Owns: the registry and the parsing of a `/name args` line. Must not own: what
 * a command does (its plugin) or how a surface reads input (the surface routes a line here first and sends
 * it to the agent only when it was not handled).
 */
export class Commands extends Service {
  private readonly registry = new Map<string, CommandDefinition>()

  constructor(ctx: Context) {
    super(ctx, 'commands')
    this.register(ctx, {
      name: 'help',
      description: 'List the slash commands.',
      run: () =>
        this.list()
          .map((command) => `/${command.name} — ${command.description}`)
          .join('\n'),
    })
  }

  /** Registers a command for as long as `ctx` lives. */
  register(ctx: Context, command: CommandDefinition): void {
    if (!NAME.test(command.name)) throw new Error(`invalid command name "${command.name}": use lower-case letters, digits and dashes`)
    ctx.effect(() => {
      if (this.registry.has(command.name)) throw new Error(`a command "/${command.name}" is already registered`)
      this.registry.set(command.name, command)
      return () => this.registry.delete(command.name)
    }, `command /${command.name}`)
  }

  list(): { name: string; description: string }[] {
    return [...this.registry.values()].map(({ name, description }) => ({ name, description })).sort((a, b) => a.name.localeCompare(b.name))
  }

  /**
   * Runs `line` when it names a registered command. Anything else (plain text, a path such as `/usr/bin`,
   * an unknown name) is not handled, so the surface sends it to the agent as a message.
   */
  async run(agent: Agent, line: string): Promise<CommandOutcome> {
    const match = LINE.exec(line.trim())
    const command = match && this.registry.get(match[1]!)
    if (!command) return { handled: false }
    try {
      const output = await command.run((match[2] ?? '').trim(), { agent })
      return { handled: true, name: command.name, output: output ?? '' }
    } catch (error) {
      return {
        handled: true,
        name: command.name,
        error: { code: error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'COMMAND_FAILED', message: error instanceof Error ? error.message : String(error) },
      }
    }
  }
}

export default Commands
