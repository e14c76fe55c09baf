import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { mcpToolName, type McpCatalogTool, type McpServerConfig } from '@dsh/mcp'
import type { ToolDefinition } from '@dsh/tools'
import type { ServerConnection } from './connection.ts'
import { mapCallResult, progressLine, type McpProgress } from './results.ts'

/** The input schema as the tools pipeline compiles it (ajv draft-07): no `$schema` draft marker, always an object. */
function parametersOf(tool: Tool): Record<string, unknown> {
  const { $schema: _draft, ...schema } = (tool.inputSchema ?? {}) as Record<string, unknown>
  return { ...schema, type: 'object', properties: schema.properties ?? {} }
}

/** The catalog of a server's tools (the names the model calls), dropping a second tool that maps to a taken name. */
export function catalogOf(
  server: McpServerConfig,
  tools: Tool[],
): { entries: McpCatalogTool[]; byName: Map<string, Tool> } {
  const byName = new Map<string, Tool>()
  for (const tool of tools) {
    const name = mcpToolName(server.name, tool.name)
    if (!byName.has(name)) byName.set(name, tool)
  }
  const entries = [...byName].map(([name, tool]) => ({ name, tool: tool.name, description: tool.description ?? '' }))
  return { entries, byName }
}

/**
 * The dsh tools of one server: the server's description and schema, validated and approved by the tools
 * pipeline like any tool. `trust: ask` makes each call an approval request offering `mcp(<server>/<tool>)`
 * (@dsh/grants), so "always" answers later calls of that tool.
 */
export function toolDefinitions(connection: ServerConnection, byName: Map<string, Tool>): ToolDefinition[] {
  const server = connection.server
  return [...byName].map(([name, tool]) => ({
    name,
    description: `${tool.description?.trim() || `The ${tool.name} tool`} (MCP server "${server.name}")`,
    parameters: parametersOf(tool),
    summarize: (args: unknown) => `${server.name}/${tool.name} ${JSON.stringify(args ?? {}).slice(0, 200)}`,
    ...(server.trust === 'ask'
      ? {
          needsApproval: () =>
            `the MCP server "${server.name}" (${server.origin}, ${server.source}) asks before each call of its tools (trust: ask)`,
        }
      : {}),
    // Progress the server tells is printed output: logged as `tool/output` for the surfaces, never the model's.
    execute: async (args: unknown, context) => {
      const print = context.liveOutput
      const onProgress = print ? (progress: McpProgress) => print(progressLine(progress)) : undefined
      return mapCallResult(await connection.call(tool.name, args, context.signal, onProgress))
    },
  }))
}
