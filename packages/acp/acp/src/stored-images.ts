import type { ContentBlock, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk'
import { STORED_IMAGE } from './updates.ts'

/** Reads a stored image's bytes (the session's attachment store), as base64. */
export type StoredImageReader = (sha256: string) => Promise<{ data: string; mimeType: string }>

interface StoredImageRef {
  sha256: string
  description?: string
}

const refOf = (block: ContentBlock): StoredImageRef | undefined =>
  block.type === 'image' ? (block._meta?.[STORED_IMAGE] as StoredImageRef | undefined) : undefined

/**
 * A tool call's content with every stored image read from the attachment store (the log holds images by
 * hash; an editor needs the bytes). An image that cannot be read is said as text naming it and why, never
 * dropped or sent empty.
 */
export async function withStoredImages(
  update: SessionUpdate,
  read: StoredImageReader | undefined,
): Promise<SessionUpdate> {
  if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return update
  const content = update.content
  if (!content?.some((item) => item.type === 'content' && refOf(item.content))) return update
  const resolved: ToolCallContent[] = []
  for (const item of content) {
    const ref = item.type === 'content' ? refOf(item.content) : undefined
    if (!ref) {
      resolved.push(item)
      continue
    }
    resolved.push({ type: 'content', content: await imageBlock(ref, read) })
  }
  return { ...update, content: resolved }
}

async function imageBlock(ref: StoredImageRef, read: StoredImageReader | undefined): Promise<ContentBlock> {
  const named = `[image ${ref.sha256.slice(0, 12)}${ref.description ? `: ${ref.description}` : ''}`
  if (!read) return { type: 'text', text: `${named} (no attachment store is mounted)]` }
  try {
    const { data, mimeType } = await read(ref.sha256)
    return { type: 'image', mimeType, data }
  } catch (error) {
    return { type: 'text', text: `${named} could not be read: ${(error as Error)?.message ?? error}]` }
  }
}
