// Images beside the session log (docs/architecture.md, "Context").
import { join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/agent'
import type {} from '@dsh/app'
import { AttachmentError, Attachments, type ImageRef, type StoredImage } from '@dsh/attachment'
import type { ImageBlock, LlmRequest, Message, TextBlock } from '@dsh/llm'
import type { Session } from '@dsh/session'
import { cwdKey } from '@dsh/session-persistence'
import type {} from '@dsh/tools'
import { adoptImages, findImage, inspect, listImages, readImage, writeImage } from './store.ts'

export { inspect } from './store.ts'

export interface Config {
  dir?: string
  maxBytes: number
  maxDimension: number
  textSubstitute: string
}

type Block = TextBlock | ImageBlock

const hasImage = (message: Message) =>
  message.role === 'user'
    ? message.content.some((block) => block.type === 'image')
    : message.role === 'tool' &&
      message.content.some((result) => result.content.some((block) => block.type === 'image'))

/**
 * Attachments on local disk (docs/architecture.md, "Context"): `<sessions dir>/<cwd-key>/<session>/attachments/<sha256>.<ext>`,
 * beside the JSONL log. Inline images entering the log (user input at `agent/pre-step`, tool results at
 * `tools/post-execute`) are stored and replaced by `{ type: 'image', sha256, mediaType }`; the request being
 * sent gets them, as an encoder of `ctx.llm` after its last check, inline for a route whose model accepts
 * images (bytes that hash to the reference) and a text substitute otherwise. The log only holds references.
 */
export default class LocalAttachments extends Attachments {
  static inject = ['app', 'sessions', 'llm']
  static Config: Schema<Config> = Schema.object({
    dir: Schema.string().description(
      'The sessions folder the attachments live beside (default: $DSH_HOME/sessions; keep it equal to the session persistence `dir`).',
    ),
    maxBytes: Schema.natural()
      .min(1)
      .default(5 * 1024 * 1024)
      .description('Largest image accepted, in bytes.'),
    maxDimension: Schema.natural().min(1).default(8000).description('Largest width or height accepted, in pixels.'),
    textSubstitute: Schema.string()
      .default(
        '[Image ({mediaType}, {width}×{height}) left out: the model {model} does not accept images.{description}]',
      )
      .description(
        'What a text-only route sees instead of an image ({mediaType}, {width}, {height}, {sha256}, {model}, {description}).',
      ),
  })

  private readonly root: string
  /** Where each image known to this process is stored (content-addressed, so any copy will do). */
  private readonly known = new Map<string, string>()
  private readonly images = new Map<string, StoredImage>()
  private readonly indexing = new Set<Promise<void>>()

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    this.root = config.dir ?? join(ctx.app.home, 'sessions')
    ctx.on('session/opened', (session, how) => {
      const task = this.index(session, how).catch((error) =>
        ctx.logger('attachments').warn('session %s: %s', session.id, error?.message ?? error),
      )
      this.indexing.add(task)
      void task.finally(() => this.indexing.delete(task))
    })
    ctx.on('agent/pre-step', async (step, next) => {
      const decision = await next()
      if (decision.action !== 'enter' || !decision.messages.some((message) => message.content.some(isInline)))
        return decision
      const messages = []
      for (const message of decision.messages)
        messages.push({ ...message, content: await this.toRefs(step.agent.session, message.content) })
      return { ...decision, messages }
    })
    ctx.on('tools/post-execute', async (invocation, next) => {
      const result = await next()
      if (!result.content.some(isInline)) return result
      return { ...result, content: await this.toRefs(invocation.context.session, result.content) }
    })
    // After the last request check: the log's references become what the route receives. `ctx.llm` accepts
    // only this change (a text, or bytes hashing to the reference), so the check compares the references.
    ctx.llm.useEncoder(ctx, {
      encode: (request) =>
        request.messages.some(hasImage) ? this.forRoute(request) : Promise.resolve(request.messages),
    })
  }

  async store(
    session: Session,
    data: Uint8Array,
    _declaredType?: string,
  ): Promise<{ ref: ImageRef; image: StoredImage }> {
    const inspected = inspect(data, this.config)
    const { ext: _ext, ...image } = inspected
    let path: string
    try {
      path = await writeImage(this.dirOf(session), data, inspected)
    } catch (error) {
      throw new AttachmentError(
        'ATTACHMENT_IO',
        `could not store the image: ${error instanceof Error ? error.message : error}`,
        { cause: error },
      )
    }
    this.known.set(image.sha256, path)
    this.images.set(image.sha256, image)
    return { ref: { type: 'image', mediaType: image.mediaType, sha256: image.sha256 }, image }
  }

  async load(session: Session, sha256: string): Promise<{ data: Uint8Array; image: StoredImage }> {
    const path = (await findImage(this.dirOf(session), sha256)) ?? this.known.get(sha256)
    if (!path) throw new AttachmentError('ATTACHMENT_NOT_FOUND', `session ${session.id} has no stored image ${sha256}`)
    return readImage(path, sha256)
  }

  private dirOf(session: Session): string {
    return join(this.root, cwdKey(session.cwd), session.id, 'attachments')
  }

  private async index(session: Session, how: 'created' | 'resumed' | 'forked'): Promise<void> {
    const dir = this.dirOf(session)
    for (const [sha, path] of await listImages(dir)) this.known.set(sha, path)
    const parent = session.header.parent
    if (how === 'forked' && parent) {
      const from = await listImages(join(this.root, cwdKey(session.cwd), parent.id, 'attachments'))
      for (const [sha, path] of await adoptImages(from, dir)) this.known.set(sha, path)
    }
  }

  /** Inline images become stored references; one that cannot be stored becomes a note saying why. */
  private async toRefs(session: Session, blocks: readonly Block[]): Promise<Block[]> {
    const out: Block[] = []
    for (const block of blocks) {
      if (!isInline(block)) {
        out.push(block)
        continue
      }
      try {
        const data = Buffer.from(block.data!, 'base64')
        if (!data.byteLength) throw new AttachmentError('ATTACHMENT_INVALID', 'the image data is empty or not base64')
        const { ref } = await this.store(session, data, block.mediaType)
        out.push(block.description ? { ...ref, description: block.description } : ref)
      } catch (error) {
        this.ctx
          .logger('attachments')
          .warn('session %s: an image was not attached: %s', session.id, error instanceof Error ? error.message : error)
        out.push({
          type: 'text',
          text: `[An image was not attached: ${error instanceof Error ? error.message : error}]`,
        })
      }
    }
    return out
  }

  /** The request's messages as its route may receive them: images inline, or described in text. */
  private async forRoute(request: Readonly<LlmRequest>): Promise<Message[]> {
    await Promise.all(this.indexing)
    let images = false
    try {
      images = this.ctx.llm.describe(request.route).images
    } catch {
      // an unknown provider fails in the adapter lookup with its own error; send text meanwhile
    }
    const model = `${request.route.provider}/${request.route.model}`
    const convert = async (blocks: readonly Block[]): Promise<Block[]> => {
      const out: Block[] = []
      for (const block of blocks) out.push(block.type === 'image' ? await this.resolve(block, images, model) : block)
      return out
    }
    const messages: Message[] = []
    for (const message of request.messages) {
      if (!hasImage(message)) messages.push(message)
      else if (message.role === 'user') messages.push({ role: 'user', content: await convert(message.content) })
      else if (message.role === 'tool')
        messages.push({
          role: 'tool',
          content: await Promise.all(
            message.content.map(async (result) => ({ ...result, content: await convert(result.content) })),
          ),
        })
      else messages.push(message)
    }
    return messages
  }

  private async resolve(block: ImageBlock, images: boolean, model: string): Promise<Block> {
    if (!images) return { type: 'text', text: await this.substitute(block, model) }
    if (block.data) return { type: 'image', mediaType: block.mediaType, data: block.data }
    const path = block.sha256 && this.known.get(block.sha256)
    try {
      if (!path) throw new AttachmentError('ATTACHMENT_NOT_FOUND', 'it is not in the attachment store')
      const { data, image } = await readImage(path, block.sha256!)
      return { type: 'image', mediaType: image.mediaType, data: Buffer.from(data).toString('base64') }
    } catch (error) {
      this.ctx
        .logger('attachments')
        .warn('image %s could not be sent: %s', block.sha256, error instanceof Error ? error.message : error)
      return {
        type: 'text',
        text: `[An image (${block.mediaType}) could not be sent: ${error instanceof Error ? error.message : error}]`,
      }
    }
  }

  private async substitute(block: ImageBlock, model: string): Promise<string> {
    let image = block.sha256 ? this.images.get(block.sha256) : undefined
    const path = block.sha256 && this.known.get(block.sha256)
    if (!image && path) {
      image = await readImage(path, block.sha256!).then(
        (read) => read.image,
        () => undefined,
      )
      if (image) this.images.set(image.sha256, image)
    }
    const vars: Record<string, string> = {
      mediaType: block.mediaType,
      width: image ? String(image.width) : '?',
      height: image ? String(image.height) : '?',
      sha256: block.sha256 ?? '',
      model,
      description: block.description ? ` It was described as: ${block.description}` : '',
    }
    return this.config.textSubstitute.replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole)
  }
}

function isInline(block: Block): block is ImageBlock & { data: string } {
  return block.type === 'image' && typeof block.data === 'string'
}
