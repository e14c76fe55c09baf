import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js'
import type { CommandDefinition } from '@dsh/commands'
import type { Agent } from '@dsh/agent'
import type { ServerConnection } from './connection.ts'

/** The slash command of a server's prompt: `mcp__<server>__<prompt>`, lower case (command names are). */
export const promptCommandName = (server: string, prompt: string) =>
  `mcp__${server}__${prompt}`.toLowerCase().replace(/[^a-z0-9_-]/g, '_')

/** A prompt's arguments from the text after the command: `name=value` pairs (`name="two words"`), else the whole text is the first argument. */
export function promptArguments(prompt: Prompt, text: string): Record<string, string> {
  const declared = prompt.arguments ?? []
  const values: Record<string, string> = {}
  const named = [...text.matchAll(/([A-Za-z_][\w-]*)=("([^"]*)"|\S+)/g)]
  if (named.length && named.every((match) => declared.some((argument) => argument.name === match[1]))) {
    for (const match of named) values[match[1]!] = match[3] ?? match[2]!
  } else if (text && declared[0]) {
    values[declared[0].name] = text
  }
  const missing = declared
    .filter((argument) => argument.required && !values[argument.name])
    .map((argument) => argument.name)
  if (missing.length)
    throw Object.assign(new Error(`/${promptCommandName('', '')}: missing ${missing.join(', ')}`), {
      code: 'MCP_PROMPT_ARGS',
    })
  return values
}

/** What a prompt returns as the user's message: its messages' text (other content as a note), each assistant turn marked. */
export function promptText(result: GetPromptResult): string {
  return result.messages
    .map((message) => {
      const content = message.content as {
        type: string
        text?: string
        resource?: { uri?: string; text?: string }
        mimeType?: string
      }
      const text =
        content.type === 'text'
          ? (content.text ?? '')
          : content.type === 'resource' && typeof content.resource?.text === 'string'
            ? `[resource ${content.resource.uri}]\n${content.resource.text}`
            : `[${content.type}${content.mimeType ? ` (${content.mimeType})` : ''} content, not included]`
      return message.role === 'assistant' ? `(assistant) ${text}` : text
    })
    .join('\n\n')
}

/**
 * The command of one server's prompt. Running it asks the invoking agent's connection for the prompt, logs
 * `mcp/prompt` (what was asked, so the next user message is known as a prompt's) and hands its text back as
 * the prompt the surface sends as the user's message.
 */
export function promptCommand(
  server: string,
  prompt: Prompt,
  connectionOf: (agent: Agent) => ServerConnection | undefined,
  logged: (agent: Agent, args: Record<string, string>) => void,
): CommandDefinition {
  const hint = (prompt.arguments ?? [])
    .map((argument) => (argument.required ? `<${argument.name}>` : `[${argument.name}]`))
    .join(' ')
  const name = promptCommandName(server, prompt.name)
  return {
    name,
    description: `${prompt.description?.trim() || `The ${prompt.name} prompt`} (MCP server "${server}")`,
    ...(hint ? { argumentHint: hint } : {}),
    origin: `mcp:${server}`,
    async run(text, { agent }) {
      const connection = connectionOf(agent)
      if (!connection?.ready)
        throw Object.assign(new Error(`/${name}: the MCP server "${server}" is not running for this session`), {
          code: 'MCP_SERVER_FAILED',
        })
      let args: Record<string, string>
      try {
        args = promptArguments(prompt, text)
      } catch (error) {
        throw Object.assign(new Error((error as Error).message.replace(`/${promptCommandName('', '')}`, `/${name}`)), {
          code: 'MCP_PROMPT_ARGS',
        })
      }
      const result = await connection.prompt(prompt.name, args, AbortSignal.timeout(connection.callTimeoutMs))
      logged(agent, args)
      return { output: `MCP prompt ${server}/${prompt.name}`, prompt: promptText(result) }
    },
  }
}
