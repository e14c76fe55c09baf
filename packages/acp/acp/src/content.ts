import type { ContentBlock } from '@agentclientprotocol/sdk'
import type { ImageBlock, TextBlock } from '@dsh/llm'
import { AcpError } from './errors.ts'
import { contextText, linkText, mentionOf } from './mentions.ts'

/**
 * An editor's prompt as the model's user message. Images pass only when the route accepts them (the
 * capability advertised at initialize says so too); a linked file is named (with a selection's line range
 * and the link's title) so the model reads it with its tools; an embedded resource is given inline, marked
 * with where it came from (mentions.ts).
 */
export function promptToBlocks(
  prompt: ContentBlock[],
  acceptsImages: boolean,
  model: string,
): (TextBlock | ImageBlock)[] {
  const blocks: (TextBlock | ImageBlock)[] = []
  for (const block of prompt) {
    switch (block.type) {
      case 'text':
        blocks.push({ type: 'text', text: block.text })
        break
      case 'image':
        if (!acceptsImages)
          throw new AcpError(
            'PROMPT_UNSUPPORTED',
            `the prompt has an image, but the model ${model} does not accept images`,
          )
        blocks.push({ type: 'image', mediaType: block.mimeType, data: block.data })
        break
      case 'audio':
        throw new AcpError(
          'PROMPT_UNSUPPORTED',
          'the prompt has audio, which dsh does not accept (promptCapabilities.audio is false)',
        )
      case 'resource_link':
        blocks.push({ type: 'text', text: linkText(mentionOf(block.uri, block.title ?? block.name)) })
        break
      case 'resource': {
        const resource = block.resource
        const mention = mentionOf(resource.uri)
        const where = mention.where
        if ('text' in resource) {
          blocks.push({ type: 'text', text: contextText(mention, resource.text) })
        } else if (acceptsImages && resource.mimeType?.startsWith('image/')) {
          blocks.push({ type: 'image', mediaType: resource.mimeType, data: resource.blob })
        } else {
          blocks.push({
            type: 'text',
            text: `[attached binary resource ${where}${resource.mimeType ? ` (${resource.mimeType})` : ''} was not included]`,
          })
        }
        break
      }
    }
  }
  if (!blocks.length) throw new AcpError('PROMPT_EMPTY', 'the prompt has no content')
  return blocks
}
