import { createHash } from 'node:crypto'
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { linkOrCopyOnce, pathExists } from '@dsh/fs-disk'
import { imageSize } from 'image-size'
import { AttachmentError, type StoredImage } from '@dsh/attachment'

/** Media types every image-capable provider accepts, by the type `image-size` detects. */
const MEDIA: Record<string, { mediaType: string; ext: string }> = {
  png: { mediaType: 'image/png', ext: 'png' },
  jpg: { mediaType: 'image/jpeg', ext: 'jpg' },
  gif: { mediaType: 'image/gif', ext: 'gif' },
  webp: { mediaType: 'image/webp', ext: 'webp' },
}
const EXTS = Object.values(MEDIA).map((media) => media.ext)
const SHA = /^[0-9a-f]{64}$/

export interface Limits {
  maxBytes: number
  maxDimension: number
}

/**
 * Checks image bytes and learns what they are from the bytes themselves: the media type is the detected
 * one (a declared type is never trusted), the size and dimensions are bounded.
 */
export function inspect(data: Uint8Array, limits: Limits): StoredImage & { ext: string } {
  if (data.byteLength > limits.maxBytes)
    throw new AttachmentError(
      'ATTACHMENT_TOO_LARGE',
      `the image is ${data.byteLength} bytes; at most ${limits.maxBytes} are accepted`,
    )
  let size: { width: number; height: number; type?: string }
  try {
    size = imageSize(data)
  } catch {
    throw new AttachmentError(
      'ATTACHMENT_UNSUPPORTED',
      'the data is not an image of a known type (PNG, JPEG, GIF or WebP)',
    )
  }
  const media = size.type ? MEDIA[size.type] : undefined
  if (!media)
    throw new AttachmentError(
      'ATTACHMENT_UNSUPPORTED',
      `images of type ${size.type ?? 'unknown'} are not accepted (PNG, JPEG, GIF or WebP are)`,
    )
  if (!size.width || !size.height) throw new AttachmentError('ATTACHMENT_INVALID', 'the image has no dimensions')
  if (Math.max(size.width, size.height) > limits.maxDimension) {
    throw new AttachmentError(
      'ATTACHMENT_TOO_LARGE',
      `the image is ${size.width}×${size.height}; at most ${limits.maxDimension} pixels a side are accepted`,
    )
  }
  const sha256 = createHash('sha256').update(data).digest('hex')
  return {
    sha256,
    mediaType: media.mediaType,
    bytes: data.byteLength,
    width: size.width,
    height: size.height,
    ext: media.ext,
  }
}

/** Writes `<dir>/<sha256>.<ext>` once (0600, atomically); the same content is the same file. */
export async function writeImage(dir: string, data: Uint8Array, image: StoredImage & { ext: string }): Promise<string> {
  const path = join(dir, `${image.sha256}.${image.ext}`)
  if (await pathExists(path)) return path
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const temp = `${path}.${process.pid}.tmp`
  await writeFile(temp, data, { mode: 0o600 })
  await chmod(temp, 0o600)
  await rename(temp, path)
  return path
}

/** The stored file of `sha256` in `dir`, if any. */
export async function findImage(dir: string, sha256: string): Promise<string | undefined> {
  if (!SHA.test(sha256)) throw new AttachmentError('ATTACHMENT_INVALID', `"${sha256}" is not a sha256 hex digest`)
  for (const ext of EXTS) {
    const path = join(dir, `${sha256}.${ext}`)
    if (await pathExists(path)) return path
  }
  return undefined
}

/** Every stored image in `dir`, by sha256. */
export async function listImages(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return found
  }
  for (const name of names) {
    const [sha, ext] = name.split('.')
    if (sha && SHA.test(sha) && ext && EXTS.includes(ext) && name === `${sha}.${ext}`) found.set(sha, join(dir, name))
  }
  return found
}

/** Gives a forked session its parent's images (hard links where the file system allows, else copies). */
export async function adoptImages(from: Map<string, string>, dir: string): Promise<Map<string, string>> {
  const adopted = new Map<string, string>()
  for (const [sha, source] of from) {
    const target = join(dir, source.slice(source.lastIndexOf('/') + 1))
    await mkdir(dir, { recursive: true, mode: 0o700 })
    await linkOrCopyOnce(source, target)
    adopted.set(sha, target)
  }
  return adopted
}

/** Reads a stored image back, checking the bytes still hash to the name they are stored under. */
export async function readImage(path: string, sha256: string): Promise<{ data: Uint8Array; image: StoredImage }> {
  let data: Buffer
  try {
    data = await readFile(path)
  } catch (error) {
    throw new AttachmentError(
      'ATTACHMENT_IO',
      `could not read ${path}: ${error instanceof Error ? error.message : error}`,
      { cause: error },
    )
  }
  const { ext: _ext, ...image } = inspect(data, { maxBytes: Infinity, maxDimension: Infinity })
  if (image.sha256 !== sha256)
    throw new AttachmentError('ATTACHMENT_INVALID', `${path} no longer holds the image it is named for`)
  return { data, image }
}
