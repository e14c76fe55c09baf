export interface LineSink {
  line(text: string): void
  /** A line grew past the limit: it is dropped up to its newline and reported once, with its start. */
  tooLong(start: string, limitBytes: number): void
}

/**
 * Splits a byte stream into lines (`\n`, an optional `\r` before it), holding at most `maxBytes` of one
 * line: the framing of the protocol (one JSON value per line). Works on bytes so a limit means bytes and a
 * UTF-8 character split across chunks is decoded whole.
 */
export class LineSplitter {
  private parts: Buffer[] = []
  private size = 0
  private dropping = false

  constructor(
    private readonly maxBytes: number,
    private readonly excerptChars: number,
    private readonly sink: LineSink,
  ) {}

  push(chunk: Buffer): void {
    let from = 0
    while (from <= chunk.length) {
      const newline = chunk.indexOf(0x0a, from)
      this.take(chunk.subarray(from, newline === -1 ? chunk.length : newline))
      if (newline === -1) return
      this.finishLine()
      from = newline + 1
    }
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.size > 0 || this.dropping) this.finishLine()
  }

  private take(piece: Buffer): void {
    if (this.dropping || piece.length === 0) return
    if (this.size + piece.length > this.maxBytes) {
      const start = Buffer.concat([...this.parts, piece.subarray(0, this.excerptChars * 4)])
        .toString('utf8')
        .slice(0, this.excerptChars)
      this.reset()
      this.dropping = true
      this.sink.tooLong(start, this.maxBytes)
      return
    }
    this.parts.push(piece)
    this.size += piece.length
  }

  private finishLine(): void {
    if (this.dropping) {
      this.dropping = false
      return
    }
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)
    this.reset()
    const text = bytes.toString('utf8').replace(/\r$/, '')
    if (text.trim()) this.sink.line(text)
  }

  private reset(): void {
    this.parts = []
    this.size = 0
  }
}
