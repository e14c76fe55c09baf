import type { AvailableCommand, StopReason } from '@agentclientprotocol/sdk'
import type { Context } from '@dsh/cordis'
import { unknownCommandNotice } from '@dsh/commands'
import type { ImageBlock, TextBlock } from '@dsh/llm'
import type { AcpSession } from './acp-session.ts'

/**
 * Slash commands on ACP: the editor is told the commands of the session's workspace
 * (`available_commands_update`, after the session is set up and again whenever the list changes), and a
 * prompt that is one text starting with a known `/name` runs the command instead of a turn. A user command's
 * prompt then runs as the turn; any other command's output comes back as the agent's message. Neither the
 * command nor its output is logged (a command is not a message); what it does may be.
 */
export class AcpCommands {
  private readonly announced = new WeakMap<AcpSession, string>()

  constructor(private readonly ctx: Context) {}

  /** Sends the session's commands when they differ from what the editor was last told. */
  async announce(session: AcpSession): Promise<void> {
    const commands = this.ctx.get('commands')
    if (!commands) return
    const availableCommands: AvailableCommand[] = (await commands.list(session.agent.cwd)).map((command) => ({
      name: command.name,
      description: command.description,
      ...(command.argumentHint ? { input: { hint: command.argumentHint } } : {}),
    }))
    const key = JSON.stringify(availableCommands)
    if (this.announced.get(session) === key) return
    this.announced.set(session, key)
    session.send([{ sessionUpdate: 'available_commands_update', availableCommands }])
  }

  /** Runs a prompt: as a command when it names one, else (with a notice for an unknown `/word`) as a turn. */
  async prompt(session: AcpSession, content: (TextBlock | ImageBlock)[]): Promise<StopReason> {
    const commands = this.ctx.get('commands')
    const line = content.length === 1 && content[0]!.type === 'text' ? content[0].text : undefined
    if (!commands || !line?.trimStart().startsWith('/')) return this.turn(session, content)
    const outcome = await commands.run(session.agent, line)
    if (!outcome.handled) {
      if (outcome.unknown) this.say(session, `${unknownCommandNotice(outcome.unknown)}\n\n`)
      return this.turn(session, content)
    }
    if ('error' in outcome) {
      this.say(session, `/${outcome.name} failed: ${outcome.error.message} (${outcome.error.code})`)
      return this.finish(session)
    }
    if (outcome.prompt !== undefined) return this.turn(session, [{ type: 'text', text: outcome.prompt }])
    this.say(session, outcome.output || `/${outcome.name} done.`)
    return this.finish(session)
  }

  private async turn(session: AcpSession, content: (TextBlock | ImageBlock)[]): Promise<StopReason> {
    const stop = await session.prompt(content)
    await this.announce(session)
    return stop
  }

  private async finish(session: AcpSession): Promise<StopReason> {
    await this.announce(session)
    await session.flush()
    return 'end_turn'
  }

  private say(session: AcpSession, text: string): void {
    session.send([{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }])
  }
}
