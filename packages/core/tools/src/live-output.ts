import { stripVTControlCharacters } from 'node:util'
import type { Context } from '@dsh/cordis'
import { Type, type Session, type Static } from '@dsh/session'
import { redactText } from './redaction.ts'

// A running call's output, logged as it is printed (docs/architecture.md, "The session log"): a display fact
// for the surfaces and for the story after a crash. The model never reads it: `deriveMessages` folds only
// the kinds it knows, and the call's `tool/result` stays the model's whole view of the call.

/** One piece of a running call's output, in order (`index` 0, 1, …). Its type and its check (issue #28.6). */
export const ToolOutputSchema = Type.Object({
  callId: Type.String({ minLength: 1 }),
  index: Type.Integer({ minimum: 0 }),
  /** The printed text as a terminal would show it: CRLF as LF, no escape sequences. Credentials redacted. */
  text: Type.String(),
  /** The bytes as printed (colours, cursor moves), when they differ from `text`. Credentials redacted. */
  raw: Type.Optional(Type.String()),
  /** This is the last piece logged for the call: it reached the live-output cap (the result still has its output). */
  capped: Type.Optional(Type.Literal(true)),
})
export type ToolOutputData = Static<typeof ToolOutputSchema>

declare module '@dsh/session' {
  interface SessionEventMap {
    'tool/output': ToolOutputData
  }
}

export interface LiveOutputLimits {
  /** A piece is logged once this many characters wait (or at the interval). */
  chunkChars: number
  /** Longest that printed output waits before it is logged (ms). */
  intervalMs: number
  /** Characters logged per call at most; past it the rest is left to the result. */
  maxChars: number
}

/** Display text of printed bytes: CRLF as LF, escape sequences removed (a lone ESC too). */
export const printedText = (raw: string): string =>
  stripVTControlCharacters(raw.replace(/\r\n/g, '\n')).replaceAll('\x1b', '')

/**
 * Collects one call's printed output and appends it as `tool/output` pieces: at whole lines when it can (an
 * escape sequence or a secret is then not cut in two), at `chunkChars` or after `intervalMs`, each flushed
 * to disk at once so a `kill -9` loses only what waits in the interval. `finish()` logs what is left; it
 * runs before the call's result is appended, so every piece precedes its result.
 */
export class LiveOutputRecorder {
  private pending = ''
  private index = 0
  private logged = 0
  private capped = false
  private finished = false
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly ctx: Context,
    private readonly session: Session,
    private readonly callId: string,
    private readonly limits: LiveOutputLimits,
  ) {}

  /** Takes printed output (the `liveOutput` of a ToolContext). */
  readonly take = (raw: string): void => {
    if (this.capped || this.finished || !raw) return
    this.pending += raw
    if (this.pending.length >= this.limits.chunkChars) this.later()
    else this.timer ??= setTimeout(this.later, this.limits.intervalMs)
  }

  /**
   * An emit from a timer or from the shell's data handler: a session closed under a running call must not
   * throw there (it would end the process); the call's result still reports how it ended.
   */
  private readonly later = (): void => {
    try {
      this.emit(false)
    } catch (error) {
      this.finished = true
      this.ctx
        .logger('tools')
        .warn(
          'live output of call %s is no longer logged: %s',
          this.callId,
          error instanceof Error ? error.message : error,
        )
    }
  }

  /** Logs what waits (the call has ended). */
  finish(): void {
    this.emit(true)
    this.finished = true // a body that ignored its abort may print on: that is no longer this call's story
  }

  private emit(all: boolean): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.capped || !this.pending) return
    const lastLineEnd = this.pending.lastIndexOf('\n')
    const whole =
      all || lastLineEnd < 0 || this.pending.length >= this.limits.chunkChars ? this.pending.length : lastLineEnd + 1
    let piece = this.pending.slice(0, whole)
    this.pending = this.pending.slice(whole)
    const room = this.limits.maxChars - this.logged
    if (piece.length >= room) {
      piece = piece.slice(0, room)
      this.capped = true
      this.pending = ''
    }
    this.logged += piece.length
    const raw = redactText(this.ctx, piece)
    const text = printedText(raw)
    this.session.append('tool/output', {
      callId: this.callId,
      index: this.index++,
      text,
      ...(raw !== text ? { raw } : {}),
      ...(this.capped ? { capped: true as const } : {}),
    })
    this.session.flush().catch(() => {}) // a failing disk fails the flush before the next model call loudly
    if (this.pending && !all) this.timer = setTimeout(this.later, this.limits.intervalMs)
  }
}
