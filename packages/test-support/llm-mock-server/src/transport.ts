// How bytes leave the server: scripted delays, SSE events one write each, stalls and cuts, and the
// timing marks benchmarks read (first byte, end).
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { MockReply, RecordedRequest } from './types.ts'

/** Aborts when the response closes (finished, or the client went away). */
export function closeSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController()
  res.once('close', () => controller.abort())
  return controller.signal
}

/** Waits `ms`; false when the client went away meanwhile. */
async function pause(ms: number | undefined, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false
  if (!ms) return true
  try {
    await sleep(ms, undefined, { signal })
    return true
  } catch {
    return false
  }
}

function markEnd(res: ServerResponse, request: RecordedRequest) {
  res.once('close', () => (request.timing.endedAt = performance.now()))
}

function writeHead(res: ServerResponse, request: RecordedRequest, status: number, headers: Record<string, string>) {
  res.writeHead(status, headers)
  res.flushHeaders()
  request.timing.firstByteAt = performance.now()
}

/** A whole JSON body (a non-streaming reply or an error), after the reply's `delayMs`. */
export async function sendJson(
  res: ServerResponse,
  request: RecordedRequest,
  status: number,
  body: unknown,
  headers: Record<string, string>,
  delayMs?: number,
) {
  markEnd(res, request)
  if (!(await pause(delayMs, closeSignal(res)))) return
  const text = JSON.stringify(body)
  writeHead(res, request, status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  })
  res.end(text)
}

const write = (res: ServerResponse, data: string) =>
  new Promise<boolean>((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve(false)
    // The callback fires once the bytes reached the socket, so a cut never drops an event already "sent".
    res.write(data, (error) => resolve(!error))
  })

/** An SSE stream of `frames`, honouring the reply's delays, stall and cut. */
export async function sendStream(
  res: ServerResponse,
  request: RecordedRequest,
  frames: string[],
  reply: MockReply,
  headers: Record<string, string>,
) {
  markEnd(res, request)
  const closed = closeSignal(res)
  if (!(await pause(reply.delayMs, closed))) return
  writeHead(res, request, 200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  })
  // "After N events" also holds when N is the whole stream: the end is then a stall or a cut, not a close.
  const stallAt = reply.stallAfterChunks === undefined ? -1 : Math.min(reply.stallAfterChunks, frames.length)
  const cutAt = reply.cutAfterChunks === undefined ? -1 : Math.min(reply.cutAfterChunks, frames.length)
  for (let i = 0; i <= frames.length; i++) {
    if (i === stallAt) {
      // Silent until the client gives up (or the server closes): the client's idle timeout is under test.
      if (!closed.aborted) await new Promise((resolve) => res.once('close', resolve))
      return
    }
    if (i === cutAt) {
      res.socket?.destroy()
      return
    }
    if (i === frames.length) break
    if (i > 0 && !(await pause(reply.chunkDelayMs, closed))) return
    if (!(await write(res, frames[i]))) return
  }
  res.end()
}
