// Slash commands (docs/architecture.md, "Skills and commands").
import { type Context, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import { builtinCommands } from './builtins.ts'

/**
 * What a command hands back besides text: a `prompt` the surface sends to the agent as the user's message
 * (a user command's expanded template), or a `sessionId` the surface switches to (/clear, /fork).
 */
export interface CommandReply {
  output?: string
  prompt?: string
  sessionId?: string
}

/** One slash command. `run` gets the text after the name (trimmed, possibly empty). */
export interface CommandDefinition {
  /** Lower-case letters, digits, dashes and underscores, without the slash (`compact`). */
  name: string
  /** One line for `/help` and for surfaces' completion lists. */
  description: string
  /** What the arguments look like, for completion (`[focus]`, `<issue-number>`). */
  argumentHint?: string
  /** Where it comes from: `dsh` for built-ins, else the file that defines it. */
  origin?: string
  /** Returns what the surface shows the user (nothing is fine), or a reply. Throw an error with a `code` to fail. */
  run(args: string, context: { agent: Agent }): Promise<string | void | CommandReply> | string | void | CommandReply
}

/** A command as surfaces offer it (completion, `/help`, ACP `available_commands_update`). */
export interface CommandInfo {
  name: string
  description: string
  argumentHint?: string
  origin: string
}

/** Commands that depend on the workspace (user Markdown commands): listed afresh for each lookup. */
export interface CommandSource {
  list(cwd: string): Promise<CommandDefinition[]>
}

export type CommandOutcome =
  /** `unknown` is set for a `/word` no command has: the surface sends the line as text and says so. */
  | { handled: false; unknown?: string }
  | { handled: true; name: string; output: string; prompt?: string; sessionId?: string }
  | { handled: true; name: string; error: { code: string; message: string } }

declare module '@dsh/cordis' {
  interface Context {
    commands: Commands
  }
}

const NAME = /^[a-z][a-z0-9_-]*$/
const LINE = /^\/([a-z][a-z0-9_-]*)(?:\s+([\s\S]*))?$/

/** The text a surface shows for an unknown `/word` it sent to the model as text. */
export const unknownCommandNotice = (name: string) =>
  `/${name} is not a command here: it was sent to the model as text (/help lists the commands).`

/**
 * Slash commands (D+P). Owns: the one registry (built-ins and plugins' commands, then workspace sources
 * such as user Markdown commands; a registered name always wins over a source's) and the parsing of a
 * `/name args` line. Must not own: what a command does (its plugin) or how a surface reads input (the
 * surface routes a line here first and sends it to the agent only when it was not handled).
 */
export class Commands extends Service {
  private readonly registry = new Map<string, CommandDefinition>()
  private readonly sources = new Set<CommandSource>()

  constructor(ctx: Context) {
    super(ctx, 'commands')
    this.register(ctx, {
      name: 'help',
      description: 'List the slash commands.',
      run: async (_args, { agent }) =>
        (await this.list(agent.cwd))
          .map(
            (command) =>
              `/${command.name}${command.argumentHint ? ` ${command.argumentHint}` : ''} — ${command.description}${command.origin === 'dsh' ? '' : ` (${command.origin})`}`,
          )
          .join('\n'),
    })
    for (const command of builtinCommands(ctx)) this.register(ctx, command)
  }

  /** Registers a command for as long as `ctx` lives. */
  register(ctx: Context, command: CommandDefinition): void {
    if (!NAME.test(command.name))
      throw new Error(`invalid command name "${command.name}": use lower-case letters, digits, dashes and underscores`)
    ctx.effect(() => {
      if (this.registry.has(command.name)) throw new Error(`a command "/${command.name}" is already registered`)
      this.registry.set(command.name, command)
      return () => this.registry.delete(command.name)
    }, `command /${command.name}`)
  }

  /** Adds a source of workspace commands for as long as `ctx` lives (checked after the registry, in order). */
  useSource(ctx: Context, source: CommandSource): void {
    ctx.effect(() => {
      this.sources.add(source)
      return () => this.sources.delete(source)
    }, 'command source')
  }

  /** Every command in force for a workspace (`cwd`; without it, the registered ones only), sorted by name. */
  async list(cwd?: string): Promise<CommandInfo[]> {
    const commands = cwd === undefined ? [...this.registry.values()] : [...(await this.resolved(cwd)).values()]
    return commands
      .map(({ name, description, argumentHint, origin }) => ({
        name,
        description,
        ...(argumentHint ? { argumentHint } : {}),
        origin: origin ?? 'dsh',
      }))
      .sort((a, b) => a.name.localeCompare(b.name))
  }

  /**
   * Runs `line` when it names a command of the agent's workspace. Anything else (plain text, a path such as
   * `/usr/bin`, an unknown name) is not handled, so the surface sends it to the agent as a message.
   */
  async run(agent: Agent, line: string): Promise<CommandOutcome> {
    const match = LINE.exec(line.trim())
    if (!match) return { handled: false }
    const command = (await this.resolved(agent.cwd)).get(match[1]!)
    if (!command) return { handled: false, unknown: match[1]! }
    try {
      const result = await command.run((match[2] ?? '').trim(), { agent })
      const reply: CommandReply = typeof result === 'object' ? result : { output: result ?? '' }
      return {
        handled: true,
        name: command.name,
        output: reply.output ?? '',
        ...(reply.prompt !== undefined ? { prompt: reply.prompt } : {}),
        ...(reply.sessionId ? { sessionId: reply.sessionId } : {}),
      }
    } catch (error) {
      return {
        handled: true,
        name: command.name,
        error: {
          code:
            error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'COMMAND_FAILED',
          message: error instanceof Error ? error.message : String(error),
        },
      }
    }
  }

  /** The registry, then each source's commands whose names are still free. */
  private async resolved(cwd: string): Promise<Map<string, CommandDefinition>> {
    const all = new Map(this.registry)
    for (const source of this.sources)
      for (const command of await source.list(cwd))
        if (NAME.test(command.name) && !all.has(command.name)) all.set(command.name, command)
    return all
  }
}

export default Commands
