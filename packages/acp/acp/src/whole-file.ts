// The whole-file diff of an applied edit, from the log: the call's card holds what its file was before and
// after it (`checkpoint/before|after` of @dsh/checkpoints, folded by @dsh/session-view), and the checkpoint
// store beside the log holds those contents. In an editor session the checkpoints read through the editor
// (fs-acp, inside the call's tool scope), so the old side is the buffer as the tool found it, unsaved
// changes included, and a `session/load` replay shows the same diff.
import type { ToolCallContent } from '@agentclientprotocol/sdk'
import type { FileSnapshot, ToolItem } from '@dsh/session-view'

type Diff = Extract<ToolCallContent, { type: 'diff' }>

export interface WholeFileSource {
  /** Largest side (bytes) sent whole; a larger one falls back to the fragment. */
  maxBytes: number
  /** A stored checkpoint's text by sha256; undefined when it is not stored or not UTF-8 text. */
  text(sha256: string): string | undefined
}

/** The diff to show for an applied change (none: nothing to show), and why it is not the whole file when it cannot be. */
export type Shown = { diff?: Diff; note?: string }

const UNRECORDED: Record<string, string> = {
  secret: 'it is a secret path (never read)',
  'too-large': 'it was too large to record',
  'not-a-file': 'it is not a regular file',
  unreadable: 'it could not be read',
}

type Side = { text: string | null } | { why: string }

function sideOf(snapshot: FileSnapshot | undefined, source: WholeFileSource): Side {
  if (!snapshot) return { why: 'its content was not recorded' }
  if ('absent' in snapshot) return { text: null }
  if ('unrecorded' in snapshot)
    return { why: UNRECORDED[snapshot.unrecorded] ?? `it was not recorded (${snapshot.unrecorded})` }
  if (snapshot.bytes > source.maxBytes)
    return { why: `it is ${snapshot.bytes} bytes, more than diffMaxBytes (${source.maxBytes})` }
  const text = source.text(snapshot.sha256)
  return text === undefined ? { why: 'its recorded content is not text or no longer stored' } : { text }
}

/**
 * The whole file `path` before and after `item` when both were recorded and fit, else `fallback` (the
 * fragment the arguments propose; none for an insert) with a note saying why. Without any checkpoint of the
 * call (no checkpoints row, a file outside the workspace) the fallback is shown as it is.
 */
export function wholeFileDiff(
  item: ToolItem,
  path: string,
  fallback: Diff | undefined,
  source: WholeFileSource | undefined,
): Shown {
  // An editing tool names one file; a call that touched several is not an edit of one file.
  const touch = item.files?.length === 1 ? item.files[0] : undefined
  if (!source || !touch) return fallback ? { diff: fallback } : {}
  const before = sideOf(touch.before, source)
  const after = sideOf(touch.after, source)
  if ('text' in before && 'text' in after && after.text !== null)
    return { diff: { type: 'diff', path, oldText: before.text, newText: after.text } }
  const why =
    'why' in before
      ? `before the call ${before.why}`
      : 'why' in after
        ? `after the call ${after.why}`
        : 'the file is gone after the call'
  const shown = fallback ? "the change is shown from the call's arguments" : 'no diff is shown'
  return { ...(fallback ? { diff: fallback } : {}), note: `Not the whole file: ${why}; ${shown}.` }
}
