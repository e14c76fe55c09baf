// When tool output is spilled and what the model is shown instead (docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { SpilledText } from '@dsh/spill'
import type { ToolInvocation, ToolResultData } from '@dsh/tools'
import { preview, previewSaved } from './preview.ts'
import { contributeLargeOutputSection } from './prompt.ts'

export { preview, previewSaved } from './preview.ts'

export interface Config {
  thresholdBytes: number
  headChars: number
  tailChars: number
  exempt: string[]
  readHint: string
}

export const name = 'spill-policy'
export const inject = ['tools', 'spillStore']

export const Config: Schema<Config> = Schema.object({
  thresholdBytes: Schema.natural()
    .min(1)
    .default(50_000)
    .description('A result whose text is larger than this (UTF-8 bytes) is spilled to a file and previewed.'),
  headChars: Schema.natural()
    .default(4000)
    .description('Characters of the beginning the preview shows (cut at a line end where one is near).'),
  tailChars: Schema.natural().default(2000).description('Characters of the end the preview shows.'),
  exempt: Schema.array(Schema.string()).default([]).description('Tools whose results are never spilled.'),
  readHint: Schema.string()
    .default('Read more of it with the read tool: that path, offset = the first line wanted, limit = how many lines.')
    .description('How the preview tells the model to read the whole output.'),
})

/**
 * A `tools/post-execute` listener: a result over `thresholdBytes` is written whole to the spill store and
 * the logged result becomes a head/tail preview naming the byte count and the file's absolute path.
 * Images in the result are kept as they are. If the store cannot write, the preview says so (never a
 * silent cut).
 */
export function apply(ctx: Context, config: Config) {
  contributeLargeOutputSection(ctx)
  ctx.on('tools/post-execute', async (invocation: ToolInvocation, next) => {
    const result = await next()
    if (config.exempt.includes(invocation.name)) return result
    const texts = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []))
    const text = texts.join('\n')
    const bytes = Buffer.byteLength(text)
    const images = result.content.filter((block) => block.type !== 'text')
    // A producer that streamed the whole output to the call's file (a command past its cap): that file is
    // the spill, every byte of it, previewed whenever the preview is shorter; the capped text must not
    // overwrite it.
    const saved =
      bytes > config.headChars + config.tailChars
        ? await ctx.spillStore.saved(invocation.context.session.id, invocation.callId, {
            headBytes: config.headChars,
            tailBytes: config.tailChars,
          })
        : undefined
    if (saved) {
      // The producer's output is its first text block (its notes follow apart): the file stands for that block.
      const at = result.content.findIndex((block) => block.type === 'text')
      return {
        ...result,
        content: result.content.map((block, index) =>
          index === at ? { type: 'text', text: previewSaved(saved, config) } : block,
        ),
      }
    }
    if (bytes <= config.thresholdBytes) return result
    let spilled: SpilledText | { failure: string }
    try {
      spilled = await ctx.spillStore.write({
        sessionId: invocation.context.session.id,
        callId: invocation.callId,
        tool: invocation.name,
        text,
      })
    } catch (error) {
      ctx
        .logger('spill')
        .warn(
          'could not spill the output of %s (%s): %s',
          invocation.name,
          invocation.callId,
          error instanceof Error ? error.message : error,
        )
      spilled = { failure: error instanceof Error ? error.message : String(error) }
    }
    const shown = preview(text, bytes, spilled, config)
    const out: ToolResultData = { ...result, content: [{ type: 'text', text: shown }, ...images] }
    return out
  })
}
