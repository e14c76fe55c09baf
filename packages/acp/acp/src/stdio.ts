import { Readable } from 'node:stream'
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk'
import type { LaunchStdio } from '@dsh/app'

/**
 * The launch's stdio (`ctx.app.stdio`: the process's, or an in-process driver's streams) as an ACP stream.
 * Stdout carries only protocol (docs/architecture.md, "Surfaces"): while the stream lives, any other write to `process.stdout` (a stray
 * `console.log` in some plugin) is sent to stderr instead, so it can never corrupt a frame. `release()` gives
 * stdout back and lets stdin go.
 */
export function stdioStream(stdio: LaunchStdio): { stream: Stream; release(): void } {
  const stdout = stdio.stdout as NodeJS.WriteStream
  const protocolWrite = stdout.write.bind(stdout) as (
    chunk: Uint8Array,
    callback: (error?: Error | null) => void,
  ) => boolean
  // Only the process's own stdout can receive a stray write; a driver's stream is the protocol's alone.
  const guarded = stdout === process.stdout
  const original = stdout.write
  if (guarded)
    stdout.write = ((chunk: any, encoding?: any, callback?: any) =>
      stdio.stderr.write(chunk, encoding, callback)) as typeof stdout.write
  const output = new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => void protocolWrite(chunk, (error) => (error ? reject(error) : resolve()))),
  })
  const input = Readable.toWeb(stdio.stdin as Readable) as unknown as ReadableStream<Uint8Array>
  return {
    stream: ndJsonStream(output, input),
    release() {
      if (guarded) stdout.write = original
      // Without this, an open stdin keeps the process alive after the tree has stopped.
      ;(stdio.stdin as Readable).destroy()
    },
  }
}
