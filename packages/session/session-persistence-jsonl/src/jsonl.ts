import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs'
import { SessionError, type SessionHeader } from '@dsh/session'

export interface ParsedLog {
  header: SessionHeader
  events: unknown[]
  /** Byte length of the complete lines; anything after it is a torn tail. */
  validBytes: number
  tornBytes: number
}

/**
 * Parses `session.jsonl`: a header line, then one event per line. A last line without its newline, or that
 * does not parse, is a torn tail (a write cut by a crash) and is reported, not returned. A bad line in the
 * middle is corruption, named by line number.
 */
export function parseLog(file: string, sessionId: string): ParsedLog {
  if (!existsSync(file)) throw new SessionError('SESSION_NOT_FOUND', `session ${sessionId} not found`)
  const buffer = readFileSync(file)
  let end = buffer.lastIndexOf(0x0a) + 1
  const text = buffer.subarray(0, end).toString('utf8')
  const lines = text.split('\n')
  lines.pop()
  const parsed: unknown[] = []
  for (let i = 0; i < lines.length; i++) {
    try {
      parsed.push(JSON.parse(lines[i]!))
    } catch {
      if (i === lines.length - 1) {
        end -= Buffer.byteLength(lines[i]!) + 1
        break
      }
      throw new SessionError('SESSION_CORRUPT', `${file}:${i + 1}: not a JSON line`)
    }
  }
  const header = parsed.shift() as SessionHeader | undefined
  if (!header || header.format !== 'dsh-session' || header.id !== sessionId) {
    throw new SessionError('SESSION_CORRUPT', `${file}:1: not a dsh session header for ${sessionId}`)
  }
  return { header, events: parsed, validBytes: end, tornBytes: buffer.length - end }
}

/** Cuts a torn tail so the next append starts on a line boundary. */
export function truncateTornTail(file: string, log: ParsedLog): void {
  if (log.tornBytes > 0) truncateSync(file, log.validBytes)
}

/** An append-only writer with an in-memory batch; `flush` writes the batch in one syscall. */
export class LineWriter {
  private readonly fd: number
  private batch: string[] = []

  constructor(file: string, private readonly sync: boolean) {
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
