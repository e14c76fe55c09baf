import type { ImageBlock, TextBlock } from '@dsh/llm'
import type { ToolOutput } from '@dsh/tools'

/** The content blocks of an MCP `tools/call` result (spec 2025-06-18), read loosely: a server may send more. */
interface McpContent {
  type: string
  text?: string
  data?: string
  mimeType?: string
  uri?: string
  name?: string
  description?: string
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string }
}

/** A `notifications/progress` the server sent for a call (spec 2025-06-18): `total` and `message` optional. */
export interface McpProgress {
  progress: number
  total?: number
  message?: string
}

/** One progress notification as a line of the call's printed output (what the surfaces show while it runs). */
export function progressLine({ progress, total, message }: McpProgress): string {
  const count = total === undefined ? `${progress}` : `${progress}/${total}`
  return `[progress ${count}]${message ? ` ${message}` : ''}\n`
}

export interface McpCallResult {
  content?: McpContent[]
  structuredContent?: unknown
  isError?: boolean
}

const bytesOf = (base64: string) => Buffer.byteLength(base64, 'base64')

/** One block as the model sees it: images stay images (stored as attachments), everything else is text. */
function mapBlock(block: McpContent): TextBlock | ImageBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text ?? '' }
    case 'image':
      return { type: 'image', mediaType: block.mimeType ?? 'image/png', data: block.data ?? '' }
    case 'resource_link':
      return {
        type: 'text',
        text: `[resource link] ${block.uri}${block.name ? ` (${block.name}${block.mimeType ? `, ${block.mimeType}` : ''})` : ''}${block.description ? `: ${block.description}` : ''}`,
      }
    case 'resource': {
      const resource = block.resource ?? {}
      if (typeof resource.text === 'string')
        return {
          type: 'text',
          text: `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]\n${resource.text}`,
        }
      if (resource.blob && resource.mimeType?.startsWith('image/'))
        return { type: 'image', mediaType: resource.mimeType, data: resource.blob }
      return {
        type: 'text',
        text: `[resource ${resource.uri} (${resource.mimeType ?? 'binary'}, ${bytesOf(resource.blob ?? '')} bytes, not shown)]`,
      }
    }
    case 'audio':
      return {
        type: 'text',
        text: `[audio (${block.mimeType ?? 'unknown type'}), ${bytesOf(block.data ?? '')} bytes, not shown]`,
      }
    default:
      return { type: 'text', text: `[${block.type} content, not shown]` }
  }
}

/**
 * A `tools/call` result as a dsh tool output. `isError` is an error result the model reads (MCP_TOOL_ERROR);
 * structured content without blocks is shown as JSON. Large text is spilled by spill-policy like any output.
 */
export function mapCallResult(result: McpCallResult): ToolOutput {
  const content = (result.content ?? []).map(mapBlock)
  if (!content.length && result.structuredContent !== undefined)
    content.push({ type: 'text', text: JSON.stringify(result.structuredContent, null, 2) })
  if (!content.length) content.push({ type: 'text', text: '(the tool returned no content)' })
  if (!result.isError) return { content }
  const message =
    content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n') ||
    'the MCP tool reported an error'
  return { content, error: { code: 'MCP_TOOL_ERROR', message } }
}
