// Tools a program implements (docs/architecture.md, "Surfaces"): registered for one session's agent, run
// through the same pipeline as every tool (validation, policy, approval, log); the body is a `tool/call`
// request to the client. Their declarations are a logged fact (`sdk/client-tools`).
import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import {
  ClientToolSchema,
  SERVER_REQUEST_SCHEMAS,
  checkValue,
  type ClientTool,
  type ToolCallResult,
} from '@dsh/sdk-protocol'
import { Type, type Static } from '@dsh/session'
import { ToolError, type ToolDefinition, type ToolOutput } from '@dsh/tools'
import { invalidParams } from './errors.ts'

/** Tools the SDK client implements in this session (each call is a `tool/call` request to it), as the protocol declares them. */
const ClientToolsData = Type.Object({ tools: Type.Array(ClientToolSchema) })

declare module '@dsh/session' {
  interface SessionEventMap {
    'sdk/client-tools': Static<typeof ClientToolsData>
  }
}

/** Sends a request to the client and resolves with its (unchecked) result. */
export type AskClient = (method: 'tool/call', params: unknown, signal: AbortSignal) => Promise<unknown>

export function defineClientToolsKind(ctx: Context): void {
  // Ignorable: the log stays readable where no SDK surface is mounted (the tools are gone there anyway).
  ctx.sessions.defineKind(ctx, 'sdk/client-tools', { ignorable: true, schema: ClientToolsData })
}

/** Before any session exists: no agent has an id yet, so only tools every agent sees resolve. */
const NO_AGENT = ''

/**
 * Refuses, by field, a tool list that repeats a name, takes a name every session already has or the MCP
 * prefix (`mcp__`, whose tools attach per session), or has a schema that is no object schema or does not compile.
 */
export function checkClientTools(ctx: Context, tools: ClientTool[]): void {
  const seen = new Set<string>()
  tools.forEach((tool, index) => {
    const field = `tools[${index}]`
    if (seen.has(tool.name)) throw invalidParams(`${field}.name`, `repeats the tool name "${tool.name}"`)
    seen.add(tool.name)
    if (tool.name.startsWith('mcp__'))
      throw invalidParams(`${field}.name`, `"${tool.name}" uses the prefix of MCP tools (mcp__)`)
    if (ctx.tools.resolve(tool.name, NO_AGENT))
      throw invalidParams(
        `${field}.name`,
        `"${tool.name}" is already a tool of this session (a client tool cannot replace a built-in, plugin or MCP tool)`,
      )
    try {
      ctx.tools.checkParameters(tool.name, tool.parameters)
    } catch (error) {
      throw invalidParams(`${field}.parameters`, error instanceof Error ? error.message : String(error))
    }
  })
}

/** Registers the tools for the agent (they end with it) and logs their declarations. */
export function registerClientTools(
  ctx: Context,
  agent: Agent,
  tools: ClientTool[],
  ask: AskClient,
  timeoutMs: number,
): void {
  if (!tools.length) return
  for (const tool of tools)
    ctx.tools.register(agent.scope, clientTool(agent, tool, ask, timeoutMs), { agentId: agent.id })
  agent.session.append('sdk/client-tools', { tools })
}

function clientTool(
  agent: Agent,
  declared: ClientTool,
  ask: AskClient,
  timeoutMs: number,
): ToolDefinition<Record<string, unknown>> {
  return {
    name: declared.name,
    description: declared.description,
    parameters: declared.parameters,
    timeoutMs,
    needsApproval: () =>
      declared.approval ? `the program asks before every call of its tool ${declared.name}` : undefined,
    async execute(args, context): Promise<ToolOutput> {
      let answer: unknown
      try {
        answer = await ask(
          'tool/call',
          { sessionId: agent.session.id, callId: context.callId, tool: declared.name, arguments: args },
          context.signal,
        )
      } catch (error) {
        if (context.signal.aborted) throw error
        throw new ToolError(
          'TOOL_FAILED',
          `the program's tool ${declared.name} failed: ${error instanceof Error ? error.message : String(error)}`,
        )
      }
      const problem = checkValue(SERVER_REQUEST_SCHEMAS['tool/call'].result, answer)
      if (problem)
        throw new ToolError(
          'TOOL_FAILED',
          `the program answered tool/call for ${declared.name} with a malformed result: ${problem.field || 'the result'} ${problem.problem}`,
        )
      const result = answer as ToolCallResult
      const content =
        typeof result.content === 'string'
          ? [{ type: 'text' as const, text: result.content }]
          : result.content.map((block) => ({ ...block }))
      return result.isError
        ? {
            content,
            error: {
              code: 'TOOL_FAILED',
              message: textOf(content) || `the program's tool ${declared.name} reported a failure`,
            },
          }
        : { content }
    },
  }
}

const textOf = (blocks: { type: string; text?: string }[]) =>
  blocks.flatMap((block) => (block.type === 'text' && block.text ? [block.text] : [])).join('\n')
