import { createHash } from 'node:crypto'
import { closeSync, openSync, readSync } from 'node:fs'

/** How much of the log before the indexed end is fingerprinted to notice an edit behind the index's back. */
export const TAIL_PROBE_BYTES = 4096

/** Reads parts of one log file through one descriptor, so the parts agree with each other. */
export class LogReader {
  private readonly fd: number

  constructor(file: string) {
    this.fd = openSync(file, 'r')
  }

  close(): void {
    closeSync(this.fd)
  }

  /** A fingerprint of the header line (another header is another log). */
  head(): string {
    const chunk = 64 * 1024
    const parts: Buffer[] = []
    for (let offset = 0; ; offset += chunk) {
      const part = this.bytes(offset, chunk)
      const newline = part.indexOf(0x0a)
      parts.push(newline >= 0 ? part.subarray(0, newline) : part)
      if (newline >= 0 || part.length < chunk) break
    }
    return hash(Buffer.concat(parts))
  }

  /** A fingerprint of the bytes just before `end`: what the index last read must still be there. */
  tail(end: number): string {
    const start = Math.max(0, end - TAIL_PROBE_BYTES)
    return hash(this.bytes(start, end - start))
  }

  /**
   * The complete lines from `offset` on, and where the last one ends. A last line without its newline is a
   * write still in progress (or torn): it is left for the next pass.
   */
  linesFrom(offset: number, size: number): { lines: string[]; end: number } {
    const buffer = this.bytes(offset, size - offset)
    const last = buffer.lastIndexOf(0x0a)
    if (last < 0) return { lines: [], end: offset }
    const lines = buffer.subarray(0, last).toString('utf8').split('\n')
    return { lines, end: offset + last + 1 }
  }

  private bytes(offset: number, length: number): Buffer {
    const buffer = Buffer.alloc(Math.max(0, length))
    let read = 0
    while (read < buffer.length) {
      const n = readSync(this.fd, buffer, read, buffer.length - read, offset + read)
      if (n === 0) break
      read += n
    }
    return buffer.subarray(0, read)
  }
}

function hash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32)
}
