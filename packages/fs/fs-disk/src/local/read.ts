import { constants, type Stats } from 'node:fs'
import { type FileHandle, lstat, open, realpath, stat } from 'node:fs/promises'
import type { FsIoConfig } from '@dsh/fs'
import { FsError, toFsError } from '@dsh/fs'
import type { FsEntryType, FsStat, FsVersion, ReadBytesOptions, ReadTextOptions, ReadTextResult } from '@dsh/fs'
import { requireAbsolute } from './paths.ts'

const NEWLINE = 0x0a

export function entryType(stats: Stats): FsEntryType {
  if (stats.isFile()) return 'file'
  if (stats.isDirectory()) return 'directory'
  if (stats.isSymbolicLink()) return 'symlink'
  return 'other'
}

export function versionOf(stats: Stats): FsVersion {
  return { mtimeMs: stats.mtimeMs, size: stats.size }
}

export async function statPath(path: string, followSymlinks = true): Promise<FsStat> {
  requireAbsolute(path)
  try {
    const own = await lstat(path)
    const stats = followSymlinks && own.isSymbolicLink() ? await stat(path) : own
    return {
      path,
      type: entryType(stats),
      isSymlink: own.isSymbolicLink(),
      size: stats.size,
      mtimeMs: stats.mtimeMs,
      mode: stats.mode & 0o7777,
      version: versionOf(stats),
    }
  } catch (error) {
    throw toFsError(error, path)
  }
}

export async function pathExists(path: string): Promise<boolean> {
  requireAbsolute(path)
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

/** A NUL byte or bytes that are not UTF-8 (a character cut by the end of the sample is fine). */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.includes(0)) return true
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: true })
    return false
  } catch {
    return true
  }
}

/**
 * Called with the real path of a file right before it is opened for reading; throws to stop the read. The
 * read fence of a provider checks there, on the path that is then opened.
 */
export type ReadCheck = (path: string, real: string) => Promise<void>

/** Opens a regular file for reading: never blocks on a FIFO, refuses directories and devices by code. */
async function openRegularFile(
  path: string,
  check?: ReadCheck,
): Promise<{ handle: FileHandle; real: string; stats: Stats }> {
  requireAbsolute(path)
  let handle: FileHandle | undefined
  try {
    const real = await realpath(path)
    await check?.(path, real)
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK)
    const stats = await handle.stat()
    if (stats.isDirectory()) throw new FsError('FS_IS_DIRECTORY', path, `"${path}" is a directory, not a file`)
    if (!stats.isFile())
      throw new FsError('FS_NOT_A_FILE', path, `"${path}" is not a regular file (a device, socket or pipe)`)
    return { handle, real, stats }
  } catch (error) {
    await handle?.close()
    throw toFsError(error, path)
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length)
  let filled = 0
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return buffer.subarray(0, filled)
}

function refuseTooLarge(path: string, size: number, limit: number): never {
  throw new FsError(
    'FS_TOO_LARGE',
    path,
    `"${path}" is ${size} bytes, more than the ${limit} bytes this file system reads at once`,
  )
}

async function refuseBinary(handle: FileHandle, path: string, config: FsIoConfig): Promise<void> {
  if (looksBinary(await readAt(handle, 0, config.binarySniffBytes))) {
    throw new FsError(
      'FS_BINARY',
      path,
      `"${path}" is not a text file (a NUL byte or invalid UTF-8 in its first ${config.binarySniffBytes} bytes)`,
    )
  }
}

export async function sniffBinaryFile(path: string, config: FsIoConfig, check?: ReadCheck): Promise<boolean> {
  const { handle } = await openRegularFile(path, check)
  try {
    return looksBinary(await readAt(handle, 0, config.binarySniffBytes))
  } finally {
    await handle.close()
  }
}

export async function readAllBytes(
  path: string,
  options: ReadBytesOptions,
  config: FsIoConfig,
  check?: ReadCheck,
): Promise<Uint8Array> {
  const limit = Math.min(positive(options.maxBytes, 'maxBytes', path) ?? config.maxFileBytes, config.maxFileBytes)
  const { handle, stats } = await openRegularFile(path, check)
  try {
    if (stats.size > limit) refuseTooLarge(path, stats.size, limit)
    return await readAt(handle, 0, stats.size)
  } catch (error) {
    throw toFsError(error, path)
  } finally {
    await handle.close()
  }
}

function positive(value: number | undefined, name: string, path: string): number | undefined {
  if (value === undefined) return undefined
  if (!Number.isSafeInteger(value) || value < 1)
    throw new FsError('FS_INVALID_ARGUMENT', path, `${name} must be a whole number of at least 1 (got ${value})`)
  return value
}

/** Drops a UTF-8 sequence cut by the end of `bytes`, so a byte cap never produces a broken character. */
function trimPartialCharacter(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!
    if ((byte & 0xc0) === 0x80) continue // a continuation byte: keep looking for the lead byte
    const width = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return width > back ? bytes.subarray(0, bytes.length - back) : bytes
  }
  return bytes
}

/**
 * Scans the file once for line ends (it must be counted whole for `totalLines`) and settles the byte range
 * of the requested lines on the way, then reads and decodes only that range.
 */
export async function readTextRange(
  path: string,
  options: ReadTextOptions,
  config: FsIoConfig,
  check?: ReadCheck,
): Promise<ReadTextResult> {
  const startLine = positive(options.startLine, 'startLine', path) ?? 1
  const maxLines = positive(options.maxLines, 'maxLines', path)
  const budget = Math.min(positive(options.maxBytes, 'maxBytes', path) ?? config.maxTextBytes, config.maxTextBytes)
  const lastLine = maxLines === undefined ? Infinity : startLine + maxLines - 1
  const { handle, real, stats } = await openRegularFile(path, check)
  try {
    if (stats.size > config.maxFileBytes) refuseTooLarge(path, stats.size, config.maxFileBytes)
    await refuseBinary(handle, path, config)

    let line = 1 // the line the next byte belongs to
    let rangeStart = startLine === 1 ? 0 : -1
    let rangeEnd = rangeStart
    let endLine = startLine - 1
    let truncated = false
    let settled = false
    let cutLine = false
    // Line `at` ends just before byte `end`: take it whole if it fits; if the first line alone does not, take its start.
    const settle = (at: number, end: number) => {
      if (end - rangeStart <= budget) {
        rangeEnd = end
        endLine = at
        settled = at === lastLine
        return
      }
      truncated = settled = true
      if (at === startLine) {
        rangeEnd = rangeStart + budget
        endLine = at
        cutLine = true
      }
    }

    const chunkSize = Math.max(1, Math.min(config.readChunkBytes, stats.size))
    const buffer = Buffer.allocUnsafe(chunkSize)
    let position = 0
    let lastByte = -1
    let firstChunk: Buffer | undefined
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, chunkSize, position)
      if (bytesRead === 0) break
      const chunk = buffer.subarray(0, bytesRead)
      if (position === 0 && bytesRead >= stats.size) firstChunk = chunk
      for (let index = chunk.indexOf(NEWLINE); index !== -1; index = chunk.indexOf(NEWLINE, index + 1)) {
        const end = position + index + 1
        if (!settled && line >= startLine) settle(line, end)
        line++
        if (line === startLine) rangeStart = rangeEnd = end
      }
      lastByte = chunk[bytesRead - 1]!
      position += bytesRead
    }
    const size = position
    const unterminated = size > 0 && lastByte !== NEWLINE
    if (unterminated && !settled && line >= startLine) settle(line, size)
    const totalLines = unterminated ? line : line - 1

    let text = ''
    if (rangeStart >= 0 && rangeEnd > rangeStart) {
      // A file that fit in the first chunk is still in memory; a larger one is read again for just the range.
      let bytes = firstChunk
        ? firstChunk.subarray(rangeStart, rangeEnd)
        : await readAt(handle, rangeStart, rangeEnd - rangeStart)
      if (cutLine) bytes = trimPartialCharacter(bytes)
      // ignoreBOM keeps a byte-order mark in the text, so writing the text back reproduces the file.
      text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)
    }
    return { path: real, text, totalLines, startLine, endLine, truncated, bytes: size, version: versionOf(stats) }
  } catch (error) {
    throw toFsError(error, path)
  } finally {
    await handle.close()
  }
}
