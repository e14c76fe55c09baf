import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs'
import { open, truncate } from 'node:fs/promises'
import { SessionError, type SessionHeader } from '@dsh/session'

export interface ParsedLog {
  header: SessionHeader
  events: unknown[]
  /** Byte length of the complete lines; anything after it is a torn tail. */
  validBytes: number
  tornBytes: number
}

/** How much of the log is read between two turns of the event loop. */
const READ_CHUNK_BYTES = 1 << 20
const NEWLINE = 0x0a

/**
 * Parses `session.jsonl`: a header line, then one event per line. A last line without its newline, or that
 * does not parse, is a torn tail (a write cut by a crash) and is reported, not returned. A bad line in the
 * middle is corruption, named by line number.
 *
 * The file is streamed chunk by chunk so a large log does not hold the event loop (every tab and socket
 * of the web host) for the whole read and parse.
 */
export async function parseLog(file: string, sessionId: string): Promise<ParsedLog> {
  const handle = await open(file, 'r').catch((error: any) => {
    if (error?.code === 'ENOENT') throw new SessionError('SESSION_NOT_FOUND', `session ${sessionId} not found`)
    throw error
  })
  const parsed: unknown[] = []
  let totalBytes = 0
  let validBytes = 0
  let lineNumber = 0
  /** A complete line that did not parse: a torn tail if nothing follows it, corruption otherwise. */
  let unparsedLine: number | undefined
  let carry: Buffer[] = []
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      totalBytes += chunk.length
      let start = 0
      let newline: number
      while ((newline = chunk.indexOf(NEWLINE, start)) !== -1) {
        if (unparsedLine !== undefined)
          throw new SessionError('SESSION_CORRUPT', `${file}:${unparsedLine}: not a JSON line`)
        lineNumber++
        const piece = chunk.subarray(start, newline)
        const line = carry.length ? Buffer.concat([...carry, piece]) : piece
        carry = []
        try {
          parsed.push(JSON.parse(line.toString('utf8')))
          validBytes += line.length + 1
        } catch {
          unparsedLine = lineNumber
        }
        start = newline + 1
      }
      if (start < chunk.length) carry.push(chunk.subarray(start))
    }
  } finally {
    await handle.close()
  }
  const header = parsed.shift() as SessionHeader | undefined
  if (!header || header.format !== 'dsh-session' || header.id !== sessionId) {
    throw new SessionError('SESSION_CORRUPT', `${file}:1: not a dsh session header for ${sessionId}`)
  }
  return { header, events: parsed, validBytes, tornBytes: totalBytes - validBytes }
}

/** Cuts a torn tail so the next append starts on a line boundary. */
export async function truncateTornTail(file: string, log: ParsedLog): Promise<void> {
  if (log.tornBytes > 0) await truncate(file, log.validBytes)
}

/**
 * An append-only writer with an in-memory batch; `flush` writes the batch in one syscall.
 *
 * Deliberately synchronous: a batch is one small write, and the last flush runs in the plugin's disposer
 * (process exit), which cannot await. An asynchronous write still in flight there could land after the
 * disposer's own write and reorder lines; one synchronous writer keeps the log strictly in seq order.
 */
export class LineWriter {
  private readonly fd: number
  private batch: string[] = []

  constructor(
    file: string,
    private readonly sync: boolean,
  ) {
    this.fd = openSync(file, 'a', 0o600)
  }

  get pending(): number {
    return this.batch.length
  }

  push(line: string): void {
    this.batch.push(line)
  }

  flush(): void {
    if (!this.batch.length) return
    const text = this.batch.join('\n') + '\n'
    this.batch = []
    writeSync(this.fd, text)
    if (this.sync) fdatasyncSync(this.fd)
  }

  close(): void {
    this.flush()
    closeSync(this.fd)
  }
}
