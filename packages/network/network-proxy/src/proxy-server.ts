import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import type { Duplex } from 'node:stream'
import { STRICT_PRIVATE_HEADER } from '@dsh/network'
import { normalizeHost } from './rules.ts'

/** Where a connection may go: the checked address to dial, or the refusal to answer with. */
export type Admission = { ok: true; address: string } | { ok: false; status: number; message: string }

export type Admit = (host: string, port: number, signal: AbortSignal, strictPrivate: boolean) => Promise<Admission>

const strict = (headers: IncomingHttpHeaders) => headers[STRICT_PRIVATE_HEADER] === '1'

export interface ProxyServerOptions {
  /** Directory under which the socket's own 0700 directory is made. */
  socketDir: string
  connectTimeoutMs: number
  admit: Admit
}

// Headers that describe one hop (RFC 9110 §7.6.1), never forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  STRICT_PRIVATE_HEADER,
])

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)))
}

/** `host:port` of a CONNECT line, `[v6]:port` included; undefined when it is not one. */
function connectTarget(authority: string | undefined): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority ?? '')
  if (!match) return undefined
  return { host: normalizeHost(match[1]!), port: Number(match[2]) }
}

/**
 * One session's HTTP proxy on a Unix socket in a private 0700 directory: CONNECT tunnels (TLS) and
 * absolute-URI requests (plain HTTP), each target admitted by `admit` before any connection is made, and
 * dialled at the address admit checked. A refusal is an HTTP error whose body says why.
 */
export class ProxyServer {
  readonly socket: string
  private readonly directory: string
  private readonly server = createServer()
  private readonly open = new Set<Duplex>()
  private readonly closing = new AbortController()

  private constructor(private readonly options: ProxyServerOptions) {
    this.directory = mkdtempSync(join(options.socketDir, 'dsh-net-'))
    this.socket = join(this.directory, 'proxy.sock')
    this.server.on('connection', (socket: Socket) => this.track(socket))
    this.server.on('request', (req, res) => void this.forward(req, res))
    this.server.on('connect', (req, socket, head) => void this.tunnel(req, socket, head))
    this.server.on('clientError', (_error, socket) => socket.destroy())
  }

  static async start(options: ProxyServerOptions): Promise<ProxyServer> {
    const proxy = new ProxyServer(options)
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject)
      proxy.server.listen(proxy.socket, () => resolve())
    })
    return proxy
  }

  /** Stops listening, cuts every open connection, removes the socket's directory. Idempotent. */
  async close(): Promise<void> {
    if (this.closing.signal.aborted) return
    this.closing.abort()
    for (const socket of this.open) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
    rmSync(this.directory, { recursive: true, force: true })
  }

  private track(socket: Duplex) {
    this.open.add(socket)
    socket.once('close', () => this.open.delete(socket))
  }

  /** Aborted when the client goes away or the proxy closes (an approval waiting on it is then cancelled). */
  private lifetime(socket: Duplex): AbortSignal {
    const controller = new AbortController()
    socket.once('close', () => controller.abort())
    return AbortSignal.any([controller.signal, this.closing.signal])
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer) {
    client.on('error', () => client.destroy())
    const target = connectTarget(req.url)
    if (!target) return reply(client, 400, `dsh: not a CONNECT target: ${req.url}`)
    const admission = await this.options.admit(target.host, target.port, this.lifetime(client), strict(req.headers))
    if (!admission.ok) return reply(client, admission.status, admission.message)
    if (client.destroyed) return
    const upstream = connect({ host: admission.address, port: target.port, timeout: this.options.connectTimeoutMs })
    this.track(upstream)
    upstream.once('timeout', () => upstream.destroy(new Error('timed out')))
    let connected = false
    upstream.once('error', (error) =>
      connected
        ? client.destroy()
        : reply(client, 502, `dsh: cannot reach ${target.host}:${target.port}: ${error.message}`),
    )
    upstream.once('connect', () => {
      connected = true
      upstream.setTimeout(0)
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
      client.once('close', () => upstream.destroy())
      upstream.once('close', () => client.destroy())
    })
  }

  private async forward(req: IncomingMessage, res: ServerResponse) {
    let url: URL
    try {
      url = new URL(req.url ?? '')
    } catch {
      return refuse(res, 400, `dsh: the proxy takes absolute http:// URLs or CONNECT, not "${req.url}"`)
    }
    if (url.protocol !== 'http:')
      return refuse(res, 400, `dsh: the proxy forwards http:// only (use CONNECT for ${url.protocol})`)
    const host = normalizeHost(url.hostname)
    const port = Number(url.port || 80)
    const admission = await this.options.admit(host, port, this.lifetime(req.socket), strict(req.headers))
    if (!admission.ok) return refuse(res, admission.status, admission.message)
    const upstream = request({
      host: admission.address,
      port,
      method: req.method,
      path: url.pathname + url.search,
      headers: { ...forwardable(req.headers), host: url.host },
      agent: false,
      timeout: this.options.connectTimeoutMs,
    })
    upstream.once('timeout', () => upstream.destroy(new Error('timed out')))
    upstream.once('error', (error) =>
      res.headersSent ? res.destroy() : refuse(res, 502, `dsh: cannot reach ${host}:${port}: ${error.message}`),
    )
    upstream.once('response', (answer) => {
      upstream.setTimeout(0)
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.headers))
      answer.pipe(res)
    })
    req.pipe(upstream)
  }
}

function refuse(res: ServerResponse, status: number, message: string) {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(message + '\n')
}

function reply(socket: Duplex, status: number, message: string) {
  if (socket.destroyed) return
  const body = Buffer.from(message + '\n')
  const reason = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : 'Bad Gateway'
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
  )
}
