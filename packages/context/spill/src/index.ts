// The spill store (docs/architecture.md, "Context").
import { type Context, Service } from '@dsh/cordis'

/** One tool result moved out of the log. */
export interface SpillEntry {
  sessionId: string
  callId: string
  /** The tool that produced it (for people browsing the store). */
  tool: string
  text: string
}

/** Where a spilled text now lives: an absolute path the model's `read` tool can open. */
export interface SpilledText {
  path: string
  bytes: number
  lines: number
}

/**
 * A text a producer already streamed whole to the store's file for a call (a command's output past the
 * cap): its size and its two ends, read back without holding the whole text.
 */
export interface SavedText extends SpilledText {
  /** The first bytes and the last bytes of the file, decoded as UTF-8 (a character cut at an end is replaced). */
  head: string
  tail: string
  /** Bytes between them that neither shows. */
  omittedBytes: number
}

export type SpillErrorCode = 'SPILL_WRITE_FAILED' | 'SPILL_INVALID'

export class SpillError extends Error {
  override name = 'SpillError'
  constructor(
    readonly code: SpillErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

declare module '@dsh/cordis' {
  interface Context {
    spillStore: SpillStore
  }
}

/**
 * Keeps texts too large for the log (docs/architecture.md, "Context"). Owns: where a spilled text is written and that only its
 * owner may read it. Must not own: when a result is spilled or what the model is shown (spill-policy).
 */
export abstract class SpillStore extends Service {
  constructor(ctx: Context) {
    super(ctx, 'spillStore')
  }

  /** Writes the text and returns where it is; throws `SpillError` when it cannot. */
  abstract write(entry: SpillEntry): Promise<SpilledText>

  /**
   * The folder holding one session's spilled texts on disk, which that session's `read` must reach even
   * though it lies under the secret `$DSH_HOME` (the sandbox policy keeps it readable); undefined when the
   * store keeps nothing on the local disk.
   */
  readableDir(_sessionId: string): string | undefined {
    return undefined
  }

  /**
   * The file a producer may stream one call's whole output into as it arrives (the bash tools do, past
   * their cap), so the spill of that call holds every byte, not what survived the cap. Undefined when the
   * store keeps nothing on the local disk.
   */
  fileFor(_sessionId: string, _callId: string): string | undefined {
    return undefined
  }

  /** What a producer saved at `fileFor(sessionId, callId)`, with `headBytes` and `tailBytes` of its ends; undefined when nothing is there. */
  async saved(
    _sessionId: string,
    _callId: string,
    _ends: { headBytes: number; tailBytes: number },
  ): Promise<SavedText | undefined> {
    return undefined
  }
}

export default SpillStore
