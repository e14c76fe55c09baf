import { Readable } from 'node:stream'
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk'

/**
 * The process's stdio as an ACP stream. Stdout carries only protocol (DESIGN §10): while the stream lives,
 * any other write to `process.stdout` (a stray `console.log` in some plugin) is sent to stderr instead, so
 * it can never corrupt a frame. `release()` gives stdout back and lets stdin go.
 */
export function stdioStream(): { stream: Stream; release(): void } {
  const stdout = process.stdout
  const protocolWrite = stdout.write.bind(stdout) as (chunk: Uint8Array, callback: (error?: Error | null) => void) => boolean
  const original = stdout.write
  stdout.write = ((chunk: any, encoding?: any, callback?: any) => process.stderr.write(chunk, encoding, callback)) as typeof stdout.write
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve, reject) => void protocolWrite(chunk, (error) => (error ? reject(error) : resolve()))),
  })
  const input = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>
  return {
    stream: ndJsonStream(output, input),
    release() {
      stdout.write = original
      // Without this, an open stdin keeps the process alive after the tree has stopped.
      process.stdin.destroy()
    },
  }
}
