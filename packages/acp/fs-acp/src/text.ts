import { FsError, type FsIoConfig, type FsVersion, type ReadTextOptions, type ReadTextResult } from '@dsh/fs'

function positive(value: number | undefined, name: string, path: string): number | undefined {
  if (value === undefined) return undefined
  if (!Number.isSafeInteger(value) || value < 1)
    throw new FsError('FS_INVALID_ARGUMENT', path, `${name} must be a whole number of at least 1 (got ${value})`)
  return value
}

/** The longest prefix of `text` within `budget` UTF-8 bytes that does not cut a character. */
function prefixWithin(text: string, budget: number): string {
  let out = ''
  let used = 0
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8')
    if (used + size > budget) break
    out += char
    used += size
  }
  return out
}

/**
 * A line range of a whole text the editor returned, with the same meaning as a local `readText` (see
 * ReadTextResult in @dsh/fs): lines keep their `\n`, a final `\n` starts no line, the byte cap stops at a line
 * end, and a first line longer than the cap is cut on a character boundary.
 */
export function sliceText(
  path: string,
  realPath: string,
  whole: string,
  options: ReadTextOptions,
  config: FsIoConfig,
  version: FsVersion,
): ReadTextResult {
  const startLine = positive(options.startLine, 'startLine', path) ?? 1
  const maxLines = positive(options.maxLines, 'maxLines', path)
  const budget = Math.min(positive(options.maxBytes, 'maxBytes', path) ?? config.maxTextBytes, config.maxTextBytes)
  const lines = whole.match(/[^\n]*\n|[^\n]+$/g) ?? []
  const last = maxLines === undefined ? lines.length : Math.min(lines.length, startLine + maxLines - 1)
  let text = ''
  let used = 0
  let endLine = startLine - 1
  let truncated = false
  for (let line = startLine; line <= last; line++) {
    const piece = lines[line - 1]!
    const size = Buffer.byteLength(piece, 'utf8')
    if (used + size > budget) {
      truncated = true
      if (line === startLine) {
        text = prefixWithin(piece, budget)
        endLine = line
      }
      break
    }
    text += piece
    used += size
    endLine = line
  }
  return {
    path: realPath,
    text,
    totalLines: lines.length,
    startLine,
    endLine,
    truncated,
    bytes: Buffer.byteLength(whole, 'utf8'),
    version,
  }
}
