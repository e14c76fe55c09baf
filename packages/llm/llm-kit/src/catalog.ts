import { LlmError, type ImageBlock, type ModelInfo } from '@dsh/llm'

// Model knowledge every adapter applies the same way, whatever its wire format.

/** A model's capabilities from an adapter's catalog; a model the catalog does not list gets `unknown` (a copy either way). */
export function fromCatalog(models: readonly ModelInfo[], unknown: Omit<ModelInfo, 'id'>, id: string): ModelInfo {
  const known = models.find((entry) => entry.id === id)
  return known ? { ...known } : { ...unknown, id }
}

/** What a model that reads no images is shown instead of one: its description; without one the request is refused. */
export function imageAsText(block: ImageBlock, model: ModelInfo): string {
  if (block.description !== undefined) return `[image: ${block.description}]`
  throw new LlmError(
    'UNSUPPORTED',
    `model ${model.id} does not read images and the image (${block.mediaType}) has no description to show instead`,
  )
}

/** The image's base64 bytes; an image the request carries only by its hash was not loaded and is refused. */
export function imageData(block: ImageBlock): string {
  if (!block.data)
    throw new LlmError(
      'UNSUPPORTED',
      `an image (${block.mediaType}) was not loaded: only its hash ${block.sha256 ?? '(none)'} is in the request`,
    )
  return block.data
}
