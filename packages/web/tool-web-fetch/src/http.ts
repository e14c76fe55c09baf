import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { openTunnel, startTls } from './tunnel.ts'

export interface Limits {
  maxBytes: number
  maxRedirects: number
  /** Deadline of the whole fetch, every hop included (ms). */
  timeoutMs: number
  userAgent: string
}

/** What one fetch ended with: the last hop's answer, the body as far as it was read, and why it stopped early. */
export interface Fetched {
  url: string
  /** Every URL asked, the first and each redirect's target. */
  hops: string[]
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
  /** Bytes as they came over the wire (before decompression). */
  wireBytes: number
  cut?: 'size' | 'time'
}

/** A fetch that could not give an answer, with a message the model reads (what, where, and why). */
export class FetchFailed extends Error {
  override name = 'FetchFailed'
  constructor(
    message: string,
    readonly refused = false,
  ) {
    super(message)
  }
}

/** The URL's host as the proxy names it: no brackets around IPv6, lower case. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()

export function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80))
}

/** Only http(s) URLs without user or password; anything else is refused before a connection is made. */
export function checkUrl(raw: string, base?: URL): URL {
  let url: URL
  try {
    url = base ? new URL(raw, base) : new URL(raw)
  } catch {
    throw new FetchFailed(`not a URL: ${JSON.stringify(raw)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FetchFailed(`only http:// and https:// URLs can be fetched, not ${url.protocol} (${url.href})`)
  if (url.username || url.password)
    throw new FetchFailed(`a URL with a user name or password is not fetched: ${url.host}`)
  url.hash = ''
  return url
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * GETs `start` and follows redirects, each hop through its own tunnel of the session's network proxy, so
 * every hop's host is decided again (a redirect from an allowed host to 127.0.0.1 is refused like a direct
 * request). The body is read up to `maxBytes` (after decompression) and until the deadline; what was read
 * by then is returned with `cut` set.
 */
export async function fetchFollowing(
  proxySocket: string,
  start: URL,
  limits: Limits,
  signal: AbortSignal,
): Promise<Fetched> {
  // The deadline starts once the first tunnel is open: a person deciding whether the host may be reached
  // is not timed by it (the tool's own deadline and cancel still apply).
  const clock = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const startClock = () => (timer ??= setTimeout(() => clock.abort(), limits.timeoutMs))
  const both = AbortSignal.any([signal, clock.signal])
  const hops: string[] = []
  let url = start
  try {
    for (;;) {
      hops.push(url.href)
      const answer = await getOnce(proxySocket, url, limits, timer ? both : signal, both, startClock).catch(
        (error: Error) => {
          if (signal.aborted) throw error
          if (clock.signal.aborted) throw new FetchFailed(`no answer from ${url.host} within ${limits.timeoutMs} ms`)
          throw error instanceof FetchFailed ? error : new FetchFailed(`cannot fetch ${url.href}: ${error.message}`)
        },
      )
      const location = answer.headers.location
      if (REDIRECTS.has(answer.statusCode ?? 0) && typeof location === 'string') {
        answer.destroy()
        if (hops.length > limits.maxRedirects)
          throw new FetchFailed(`more than ${limits.maxRedirects} redirects (last: ${url.href} → ${location})`)
        url = checkUrl(location, url)
        continue
      }
      const body = await readBody(answer, limits.maxBytes, both, clock.signal)
      return { url: url.href, hops, status: answer.statusCode ?? 0, headers: answer.headers, ...body }
    }
  } finally {
    clearTimeout(timer)
  }
}

async function getOnce(
  proxySocket: string,
  url: URL,
  limits: Limits,
  tunnelSignal: AbortSignal,
  signal: AbortSignal,
  opened: () => void,
): Promise<IncomingMessage> {
  const host = hostOf(url)
  let socket: Socket = await openTunnel(proxySocket, host, portOf(url), tunnelSignal).catch((error: Error) => {
    throw 'status' in error ? new FetchFailed(error.message, true) : error
  })
  opened()
  if (url.protocol === 'https:')
    socket = await startTls(socket, host, signal).catch((error) => (socket.destroy(), Promise.reject(error)))
  return new Promise((resolve, reject) => {
    const req = request({
      createConnection: () => socket,
      method: 'GET',
      path: url.pathname + url.search,
      headers: {
        host: url.host,
        'user-agent': limits.userAgent,
        accept: 'text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5',
        'accept-encoding': 'gzip, deflate, br',
        connection: 'close',
      },
      signal,
    })
    req.once('response', resolve)
    req.once('error', (error) => (socket.destroy(), reject(error)))
    req.end()
  })
}

function decoded(answer: IncomingMessage): Readable {
  switch (
    String(answer.headers['content-encoding'] ?? '')
      .trim()
      .toLowerCase()
  ) {
    case 'gzip':
    case 'x-gzip':
      return answer.pipe(createGunzip())
    case 'deflate':
      return answer.pipe(createInflate())
    case 'br':
      return answer.pipe(createBrotliDecompress())
    default:
      return answer
  }
}

async function readBody(
  answer: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
  deadline: AbortSignal,
): Promise<{ body: Buffer; wireBytes: number; cut?: 'size' | 'time' }> {
  let wireBytes = 0
  answer.on('data', (chunk: Buffer) => void (wireBytes += chunk.length))
  const stream = decoded(answer)
  const chunks: Buffer[] = []
  let size = 0
  const result = await new Promise<'done' | 'size' | 'time' | Error>((resolve) => {
    const stop = (why: 'size' | 'time' | 'done' | Error) => {
      signal.removeEventListener('abort', onAbort)
      resolve(why)
    }
    const onAbort = () => stop(deadline.aborted ? 'time' : new Error('aborted'))
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    stream.on('data', (chunk: Buffer) => {
      const room = maxBytes - size
      if (room <= 0 || chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room))
        size += Math.max(room, 0)
        return stop('size')
      }
      chunks.push(chunk)
      size += chunk.length
    })
    stream.once('end', () => stop('done'))
    stream.once('error', (error) => stop(size ? 'done' : error))
    answer.once('error', (error) => stop(size ? 'done' : error))
  })
  answer.destroy()
  stream.destroy()
  if (result instanceof Error) {
    if (signal.aborted && !deadline.aborted) throw result
    throw new FetchFailed(`the answer could not be read: ${result.message}`)
  }
  const body = Buffer.concat(chunks)
  return { body, wireBytes, ...(result === 'done' ? {} : { cut: result }) }
}
