import { request } from 'node:http'
import { isIP, type Socket } from 'node:net'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { STRICT_PRIVATE_HEADER } from '@dsh/network'

/** The proxy (or the way to it) would not open the tunnel: `message` is its reason, for the model. */
export class TunnelRefused extends Error {
  override name = 'TunnelRefused'
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** `host:port` as a CONNECT line writes it (`[::1]:8080` for IPv6). */
export const authority = (host: string, port: number) => `${isIP(host) === 6 ? `[${host}]` : host}:${port}`

const REFUSAL_BODY_CAP = 4096

/**
 * A CONNECT tunnel to `host:port` through the session's network proxy on its Unix socket. The proxy decides
 * (allow-list, deny-list, grants, a person), resolves the name once and dials the address it checked; so
 * this side never resolves a name and never dials anything but the proxy. The tunnel is asked strict: a
 * loopback or private address only by an exact network.allow entry, never by an approval or a grant. A refusal is TunnelRefused with
 * the proxy's own message (`dsh: network not allowed: …`).
 */
export function openTunnel(proxySocket: string, host: string, port: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const target = authority(host, port)
    const req = request({
      socketPath: proxySocket,
      method: 'CONNECT',
      path: target,
      headers: { host: target, [STRICT_PRIVATE_HEADER]: '1' },
      signal,
    })
    req.once('error', (error) =>
      reject(signal.aborted ? error : new TunnelRefused(502, `dsh: the network proxy failed: ${error.message}`)),
    )
    const refused = (status: number, chunks: Buffer[], more: NodeJS.ReadableStream | undefined) => {
      let size = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
      const done = () => {
        const body = Buffer.concat(chunks).toString('utf8').slice(0, REFUSAL_BODY_CAP).trim()
        reject(new TunnelRefused(status, body || `dsh: the network proxy refused ${target} (${status})`))
      }
      if (!more) return done()
      more.on('data', (chunk: Buffer) => {
        if (size < REFUSAL_BODY_CAP) chunks.push(chunk)
        size += chunk.length
      })
      more.once('end', done)
      more.once('close', done)
      more.once('error', done)
    }
    req.once('connect', (res, socket, head) => {
      if (res.statusCode === 200) {
        if (head.length) socket.unshift(head)
        return resolve(socket)
      }
      refused(res.statusCode ?? 502, head.length ? [head] : [], socket)
    })
    req.once('response', (res) => refused(res.statusCode ?? 502, [], res))
    req.end()
  })
}

/** TLS over an open tunnel, the certificate checked against `host` (SNI set unless it is an address). */
export function startTls(socket: Socket, host: string, signal: AbortSignal): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, host, ...(isIP(host) ? {} : { servername: host }), ALPNProtocols: ['http/1.1'] })
    const abort = () => tls.destroy(new Error('aborted'))
    signal.addEventListener('abort', abort, { once: true })
    tls.once('secureConnect', () => {
      signal.removeEventListener('abort', abort)
      resolve(tls)
    })
    tls.once('error', (error) => {
      signal.removeEventListener('abort', abort)
      reject(error)
    })
  })
}
