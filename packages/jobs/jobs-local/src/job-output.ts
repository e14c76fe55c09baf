/** How much of a job's output is kept in memory and handed out per read. */
export interface OutputLimits {
  memoryChars: number
  readChars: number
}

export interface OutputSlice {
  text: string
  /** Unread characters not in `text`. */
  skipped: number
}

/**
 * A job's output: the last `memoryChars` characters in memory, positions counted from the job's first
 * output, and the read mark (what the model has already been shown).
 */
export class JobOutputBuffer {
  private kept = ''
  private keptFrom = 0
  private mark = 0
  total = 0

  constructor(private readonly limits: OutputLimits) {}

  push(data: string): void {
    this.kept += data
    this.total += data.length
    // Trim in batches so a chatty job does not copy the whole buffer per chunk.
    if (this.kept.length > this.limits.memoryChars * 2) {
      const cut = this.kept.length - this.limits.memoryChars
      this.kept = this.kept.slice(cut)
      this.keptFrom += cut
    }
  }

  /** What is new since the last read (or, with `tail`, the latest output), at most `readChars`; moves the mark to the end. */
  read(tail: boolean): OutputSlice {
    const oldest = Math.max(this.keptFrom, this.total - this.limits.memoryChars)
    const latest = this.total - this.limits.readChars
    const from = Math.max(oldest, latest, tail ? 0 : this.mark)
    const skipped = tail ? 0 : from - this.mark
    this.mark = this.total
    return { text: this.kept.slice(from - this.keptFrom), skipped }
  }
}
