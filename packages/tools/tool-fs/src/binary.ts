import { extname } from 'node:path'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import type { ToolOutput } from '@dsh/tools'
import type { Config } from './config.ts'

type Authority = Awaited<ReturnType<Context['sandboxPolicy']['authority']>>

/** Media types by name, for files too large to read to look at their first bytes. */
const BY_EXTENSION: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
}

/** Media type of an image by its first bytes (what image routes accept), or undefined. */
function imageType(head: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to))
  if (head[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png'
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg'
  if (ascii(0, 4) === 'GIF8') return 'image/gif'
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp'
  return undefined
}

/**
 * What `read` returns for a file that is not text: an image as an image block (attachment-local stores it
 * and the route's encoder sends it inline to an image model, as a note to others), a PDF or anything else
 * described. Without an attachments row nothing would keep image bytes out of the log, so images are only
 * described then.
 */
export async function binary(
  ctx: Context,
  config: Config,
  file: string,
  shown: string,
  authority: Authority,
): Promise<ToolOutput> {
  const { size } = await ctx.fs.stat(file)
  const small = size <= config.readImageMaxBytes
  const bytes = small ? await ctx.fs.readBytes(file, { authority, maxBytes: config.readImageMaxBytes }) : undefined
  const mediaType = bytes ? imageType(bytes) : BY_EXTENSION[extname(file).toLowerCase()]
  const pdf = bytes ? String.fromCharCode(...bytes.subarray(0, 5)) === '%PDF-' : extname(file).toLowerCase() === '.pdf'
  const attachments = (ctx as unknown as { get(name: string): unknown }).get('attachments') // typed in @dsh/attachment; only its presence matters here
  if (mediaType && bytes && attachments) {
    return {
      content: [
        { type: 'text', text: `"${shown}" is an image (${mediaType}, ${size} bytes):` },
        { type: 'image', mediaType, data: Buffer.from(bytes).toString('base64') },
      ],
    }
  }
  if (mediaType)
    return `"${shown}" is an image (${mediaType}, ${size} bytes); it is not shown: ${small ? 'no attachment store is mounted' : `it is larger than ${config.readImageMaxBytes} bytes`}.`
  if (pdf)
    return `"${shown}" is a PDF (${size} bytes): read does not extract PDF text. If a converter is installed, run it in the shell (e.g. pdftotext -layout "${shown}" -) and read its output.`
  return `"${shown}" is a binary file (${size} bytes); its contents are not shown.`
}
