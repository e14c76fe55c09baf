import type { FileHandle } from 'node:fs/promises'

const CHUNK = 1 << 20

/**
 * The size, line count and two ends of a spilled file, reading it once in fixed chunks (a saved output may
 * be as large as the producer's ceiling; it is never held whole).
 */
export async function readEnds(
  file: FileHandle,
  ends: { headBytes: number; tailBytes: number },
): Promise<{ bytes: number; lines: number; head: string; tail: string; omittedBytes: number }> {
  const { size } = await file.stat()
  const headBytes = Math.min(size, ends.headBytes)
  const tailBytes = Math.min(size - headBytes, ends.tailBytes)
  const read = async (position: number, length: number) => {
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await file.read(buffer, 0, length, position)
    return buffer.subarray(0, bytesRead)
  }
  let newlines = 0
  let last = 0
  const buffer = Buffer.alloc(CHUNK)
  for (let position = 0; position < size;) {
    const { bytesRead } = await file.read(buffer, 0, CHUNK, position)
    if (!bytesRead) break
    for (let i = buffer.indexOf(10, 0); i !== -1 && i < bytesRead; i = buffer.indexOf(10, i + 1)) newlines++
    last = buffer[bytesRead - 1]!
    position += bytesRead
  }
  // As countLines counts a text: a last line without a newline is a line too.
  const lines = size === 0 ? 0 : newlines + (last === 10 ? 0 : 1)
  return {
    bytes: size,
    lines,
    head: (await read(0, headBytes)).toString('utf8'),
    tail: (await read(size - tailBytes, tailBytes)).toString('utf8'),
    omittedBytes: size - headBytes - tailBytes,
  }
}
