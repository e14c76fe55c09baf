import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js'
import type { ImageBlock, TextBlock } from '@dsh/llm'
import { MCP_RESOURCE_TOOL } from '@dsh/mcp'
import { ToolError, type ToolDefinition, type ToolOutput } from '@dsh/tools'
import type { ServerConnection } from './connection.ts'

const bytesOf = (base64: string) => Buffer.byteLength(base64, 'base64')

/** A server's resource list, one line each: what the model passes back as `uri`. */
export function listingText(server: string, resources: Resource[]): string {
  if (!resources.length) return `The MCP server "${server}" lists no resources.`
  const lines = resources.map((resource) => {
    const detail = [resource.mimeType, resource.description].filter(Boolean).join(': ')
    return `${resource.uri} — ${resource.title ?? resource.name}${detail ? ` (${detail})` : ''}`
  })
  return [`Resources of the MCP server "${server}" (read one with its uri):`, ...lines].join('\n')
}

/**
 * A `resources/read` result as a tool output, like a tool's result: text as text (spilled by spill-policy when
 * large), an image blob as an image block (stored as an attachment), any other blob as a note of its size.
 */
export function mapReadResult(result: ReadResourceResult): ToolOutput {
  const content: (TextBlock | ImageBlock)[] = result.contents.map((item) => {
    const label = `[resource ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ''}]`
    if ('text' in item && typeof item.text === 'string') return { type: 'text', text: `${label}\n${item.text}` }
    const blob = 'blob' in item && typeof item.blob === 'string' ? item.blob : ''
    if (item.mimeType?.startsWith('image/')) return { type: 'image', mediaType: item.mimeType, data: blob }
    return {
      type: 'text',
      text: `[resource ${item.uri} (${item.mimeType ?? 'binary'}, ${bytesOf(blob)} bytes, not shown)]`,
    }
  })
  if (!content.length) content.push({ type: 'text', text: '(the resource has no contents)' })
  return { content }
}

interface ResourceArgs {
  server: string
  uri?: string
}

/**
 * `mcp_resource`: lists the resources of one of the agent's servers, or reads one by URI. One tool for every
 * server that offers resources (its schema names them); approved like that server's tools: `trust: ask`
 * asks, and rules name it `mcp(<server>/@resources)` (so `mcp(<server>/*)` covers it).
 */
export function resourceTool(connections: ServerConnection[]): ToolDefinition<ResourceArgs> {
  const byName = new Map(connections.map((connection) => [connection.server.name, connection]))
  const connectionOf = (server: string) => {
    const connection = byName.get(server)
    if (!connection)
      throw new ToolError(
        'INVALID_ARGS',
        `no MCP server "${server}" offers resources here (servers: ${[...byName.keys()].join(', ')})`,
      )
    return connection
  }
  return {
    name: MCP_RESOURCE_TOOL,
    description: `List the resources an MCP server offers (omit uri), or read one (give its uri). Servers with resources: ${[...byName.keys()].join(', ')}.`,
    parameters: {
      type: 'object',
      required: ['server'],
      additionalProperties: false,
      properties: {
        server: { type: 'string', enum: [...byName.keys()], description: 'The MCP server.' },
        uri: {
          type: 'string',
          minLength: 1,
          description: 'The resource to read, as the listing gives it; omit it to list.',
        },
      },
    },
    summarize: (args) => `${args.server} ${args.uri ? `read ${args.uri}` : 'list resources'}`,
    needsApproval: (args) => {
      const server = byName.get(args.server)?.server
      if (server?.trust !== 'ask') return undefined
      return `the MCP server "${server.name}" (${server.origin}, ${server.source}) asks before each use of its tools and resources (trust: ask)`
    },
    execute: async (args, context) => {
      const connection = connectionOf(args.server)
      if (args.uri === undefined) return listingText(args.server, await connection.listResources(context.signal))
      return mapReadResult(await connection.readResource(args.uri, context.signal))
    },
  }
}
