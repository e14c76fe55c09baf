// Where a text the model meant to replace most likely is, when it is not in the file exactly (edit and
// str_replace_editor say so, so the model can copy the real text instead of guessing again).
import { splitLines } from './lines.ts'

/** Bigrams of a string, counted. */
function bigrams(text: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (let at = 0; at < text.length - 1; at++)
    counts.set(text.slice(at, at + 2), (counts.get(text.slice(at, at + 2)) ?? 0) + 1)
  return counts
}

/** How alike two lines are, 0..1 (Dice coefficient over bigrams, whitespace at the ends ignored). */
function lineSimilarity(a: string, b: string): number {
  const x = a.trim()
  const y = b.trim()
  if (x === y) return 1
  if (x.length < 2 || y.length < 2) return 0
  const left = bigrams(x)
  let shared = 0
  for (const [gram, count] of bigrams(y)) shared += Math.min(count, left.get(gram) ?? 0)
  return (2 * shared) / (x.length - 1 + (y.length - 1))
}

export interface ClosestMatch {
  /** 1-based first and last line of the most similar stretch of the file. */
  from: number
  to: number
  /** 0..1: the mean similarity of its lines to the wanted ones. */
  similarity: number
  /** The stretch differs from the wanted text only in whitespace. */
  whitespaceOnly: boolean
}

/**
 * The stretch of `text` with as many lines as `wanted` that is most like it, when it is at least `minSimilarity`
 * alike; undefined otherwise, or when the file has more than `maxLines` lines (the scan would be slow).
 */
export function closestMatch(
  text: string,
  wanted: string,
  options: { minSimilarity: number; maxLines: number },
): ClosestMatch | undefined {
  const lines = splitLines(text)
  const want = splitLines(wanted)
  if (!want.length || !lines.length || lines.length > options.maxLines) return undefined
  const size = Math.min(want.length, lines.length)
  let best: { from: number; similarity: number } | undefined
  for (let from = 0; from + size <= lines.length; from++) {
    let sum = 0
    for (let at = 0; at < size; at++) sum += lineSimilarity(lines[from + at]!, want[at]!)
    const similarity = sum / want.length
    if (!best || similarity > best.similarity) best = { from, similarity }
  }
  if (!best || best.similarity < options.minSimilarity) return undefined
  const found = lines.slice(best.from, best.from + size)
  const squash = (parts: string[]) => parts.join('\n').replace(/\s+/g, ' ').trim()
  return {
    from: best.from + 1,
    to: best.from + size,
    similarity: best.similarity,
    whitespaceOnly: squash(found) === squash(want),
  }
}
