import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/** Where the whole output of a command went, and whether all of it fit under the ceiling. */
export interface SavedOutput {
  path: string
  /** Bytes in the file (the command's output exactly, unless `complete` is false). */
  bytes: number
  /** False when the output passed the ceiling: the file holds its first `bytes` bytes. */
  complete: boolean
  /** Set when the file could not be written (the output is then only what the cap kept). */
  failure?: string
}

export interface FullOutputTarget {
  path: string
  /** At most this many bytes are written (a runaway command must not fill the disk). */
  ceilingBytes: number
  /** Output read from a terminal: its CRLF line ends are written as the LF the program printed. */
  fromTerminal?: boolean
}

/**
 * The whole output of one command, written to a file (0600, its folder 0700: output may hold anything the
 * command saw) as it arrives, so a note saying "the full output is saved" is true for every byte. Writes are
 * synchronous: chunks arrive in order on one thread, and a command's output is bounded by the ceiling.
 */
export class FullOutputFile {
  private fd: number | undefined
  private written = 0
  private overflowed = false
  private failure: string | undefined
  private asked = false

  constructor(readonly target: FullOutputTarget) {
    // The file is this run's output or absent: a reader must never take an older run's file for this one's.
    try {
      rmSync(target.path, { force: true })
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error)
    }
  }

  write(chunk: Buffer): void {
    this.asked = true
    this.append(this.target.fromTerminal ? this.terminalLineEnds(chunk) : chunk)
  }

  private append(chunk: Buffer): void {
    if (this.failure || !chunk.length) return
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.target.path), { recursive: true, mode: 0o700 })
        this.fd = openSync(this.target.path, 'w', 0o600)
      }
      const room = this.target.ceilingBytes - this.written
      if (chunk.length > room) this.overflowed = true
      const part = chunk.length > room ? chunk.subarray(0, Math.max(0, room)) : chunk
      for (let offset = 0; offset < part.length;) offset += writeSync(this.fd, part, offset)
      this.written += part.length
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error)
    }
  }

  private heldReturn = false

  /** CRLF → LF across chunk borders: a chunk's last CR waits for the next chunk (latin1 keeps every byte). */
  private terminalLineEnds(chunk: Buffer): Buffer {
    let text = (this.heldReturn ? '\r' : '') + chunk.toString('latin1')
    this.heldReturn = text.endsWith('\r')
    if (this.heldReturn) text = text.slice(0, -1)
    return Buffer.from(text.replace(/\r\n/g, '\n'), 'latin1')
  }

  /** Closes the file; undefined when nothing was ever asked to be written (the output stayed under the cap). */
  close(): SavedOutput | undefined {
    if (this.heldReturn) this.append(Buffer.from('\r', 'latin1'))
    this.heldReturn = false
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
    if (!this.asked) return undefined
    return {
      path: this.target.path,
      bytes: this.written,
      complete: !this.overflowed && !this.failure,
      ...(this.failure ? { failure: this.failure } : {}),
    }
  }
}
