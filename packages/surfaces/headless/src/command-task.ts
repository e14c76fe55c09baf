import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import { unknownCommandNotice } from '@dsh/commands'
import type { RunIO } from './run.ts'
import { printable } from './text.ts'

/** What to do with a task after the command registry saw it: send this text as the prompt, or stop here. */
export type TaskRouting = { send: string } | { done: true; failed?: string }

/**
 * A task that starts with a known command runs it (`dsh "/fix-issue 123"`): a command with a prompt (a user
 * Markdown command) sends that prompt as the task; any other prints its output and ends the run without a
 * turn. An unknown `/word` is sent as text, and stderr says so.
 */
export async function routeTask(
  ctx: Context,
  agent: Agent,
  task: string,
  io: RunIO,
  options: { json: boolean; quiet: boolean },
): Promise<TaskRouting> {
  const commands = ctx.get('commands')
  if (!commands) return { send: task }
  const outcome = await commands.run(agent, task)
  if (!outcome.handled) {
    if (outcome.unknown && !options.quiet) io.stderr.write(`dsh: ${unknownCommandNotice(outcome.unknown)}\n`)
    return { send: task }
  }
  if ('error' in outcome)
    return {
      done: true,
      failed: `/${outcome.name} failed: ${outcome.error.message} (${outcome.error.code}); session ${agent.session.id}`,
    }
  if (options.json)
    io.stdout.write(
      JSON.stringify({
        type: 'command',
        name: outcome.name,
        output: outcome.output,
        ...(outcome.sessionId ? { sessionId: outcome.sessionId } : {}),
      }) + '\n',
    )
  else if (outcome.prompt === undefined && outcome.output) {
    // A command's output can carry a repository's text (server names, descriptions): text only on a terminal.
    const output = io.stdout.isTTY ? printable(outcome.output) : outcome.output
    io.stdout.write(output.endsWith('\n') ? output : `${output}\n`)
  } else if (outcome.output && !options.quiet) io.stderr.write(`${printable(outcome.output)}\n`)
  return outcome.prompt !== undefined ? { send: outcome.prompt } : { done: true }
}
