import { StringDecoder } from 'node:string_decoder'
import { FullOutputFile, type FullOutputTarget, type SavedOutput } from './full-output.ts'

/**
 * Output bounded to a byte budget, keeping the head and the tail (the start says what ran, the end says how
 * it ended) and noting in the middle how many bytes were cut. The note's shape is part of the subprocess
 * contract, which is why every provider and shell driver uses this one class. With a `full` target, the
 * whole output also streams to a file once it passes the cap (everything before included), so nothing the
 * note says was cut is lost. With `onText`, every chunk is also handed on as it arrives, decoded (a character
 * split across chunks waits for its last byte), for a live display; the cap does not apply to it.
 */
export class CappedOutput {
  private readonly headLimit: number
  private readonly tailLimit: number
  private head: Buffer[] = []
  private headBytes = 0
  private tail: Buffer[] = []
  private tailBytes = 0
  private total = 0
  private readonly full: FullOutputFile | undefined
  private readonly decoder = new StringDecoder('utf8')

  constructor(
    readonly capBytes: number,
    full?: FullOutputTarget,
    private readonly onText?: (text: string) => void,
  ) {
    this.headLimit = Math.ceil(capBytes / 2)
    this.tailLimit = capBytes - this.headLimit
    this.full = full ? new FullOutputFile(full) : undefined
  }

  get totalBytes(): number {
    return this.total
  }

  get truncated(): boolean {
    return this.total > this.capBytes
  }

  push(chunk: Buffer | string): void {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    if (this.onText && bytes.length) {
      const text = this.decoder.write(bytes)
      if (text) this.onText(text)
    }
    if (this.full && this.total + bytes.length > this.capBytes) {
      // Up to the cap nothing was dropped yet: head and tail together are everything before this chunk.
      if (this.total <= this.capBytes) for (const kept of [...this.head, ...this.tail]) this.full.write(kept)
      this.full.write(bytes)
    }
    this.total += bytes.length
    if (this.headBytes < this.headLimit) {
      const take = bytes.subarray(0, this.headLimit - this.headBytes)
      this.head.push(take)
      this.headBytes += take.length
      bytes = bytes.subarray(take.length)
    }
    if (!bytes.length || !this.tailLimit) return
    this.tail.push(bytes)
    this.tailBytes += bytes.length
    while (this.tailBytes - this.tail[0]!.length >= this.tailLimit) this.tailBytes -= this.tail.shift()!.length
  }

  /** Ends the full output file (call once the command is done); undefined when nothing had to be saved. */
  saved(): SavedOutput | undefined {
    return this.full?.close()
  }

  /** The kept text: everything when under the cap, else head + `[… N bytes cut …]` + tail. */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8')
    let tail = Buffer.concat(this.tail)
    if (!this.truncated) return head + tail.toString('utf8')
    tail = tail.subarray(tail.length - this.tailLimit)
    const cut = this.total - this.headBytes - tail.length
    return `${head}\n[… ${cut} bytes cut …]\n${tail.toString('utf8')}`
  }
}
