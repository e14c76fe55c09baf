// The checks every request passes before anything else reads it (docs/architecture.md, "Surfaces"): DNS rebinding (Host),
// cross-site requests (Origin, Sec-Fetch-Site) and where the peer is (the sign-in is sign-in.ts). Pure
// functions over header values, so each rule reads on its own.
import { isIP } from 'node:net'
import { WebError } from './errors.ts'

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1'])

/** `127.0.0.0/8`, `::1`, and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false
  const bare = address.replace(/^::ffff:/i, '')
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

/** A hostname that always means this machine: `localhost` and the loopback addresses. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[|\]$/g, '')
  return LOOPBACK_NAMES.has(name) || isLoopbackAddress(name)
}

/** Splits a Host header (`name:port`, `[v6]:port`) into its hostname and port. */
export function parseHostHeader(value: string): { hostname: string; port?: string } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/]+)(?::(\d{1,5}))?$/.exec(value.trim())
  if (!match) return undefined
  return { hostname: match[1]!.toLowerCase().replace(/^\[|\]$/g, ''), port: match[2] }
}

/**
 * The Host header must name this machine or a host the user trusts explicitly, and the port we listen
 * on: a page on `evil.example` that rebinds its name to 127.0.0.1 sends `Host: evil.example` and is refused.
 */
export function checkHost(value: string | undefined, port: number, trusted: readonly string[]): void {
  const parsed = value ? parseHostHeader(value) : undefined
  if (!parsed)
    throw new WebError(
      'HOST_REFUSED',
      `refused: the Host header ${value === undefined ? 'is missing' : `"${value}" is malformed`}`,
    )
  const known = isLoopbackName(parsed.hostname) || trusted.some((host) => host.toLowerCase() === parsed.hostname)
  if (!known)
    throw new WebError(
      'HOST_REFUSED',
      `refused: Host "${value}" is not this machine (DNS rebinding?); add it to the webserver row's trustedHosts if it is yours`,
    )
  if (parsed.port !== undefined && Number(parsed.port) !== port)
    throw new WebError('HOST_REFUSED', `refused: Host "${value}" names port ${parsed.port}, not ${port}`)
}

/**
 * Cross-site requests are refused: an `Origin` must be exactly the page's own origin (`http://` + the
 * checked Host), and a browser's `Sec-Fetch-Site` must say the request came from that origin or from the
 * user (typing the URL). `requireOrigin` is set for WebSocket upgrades, which browsers always tag.
 */
export function checkOrigin(
  headers: { host?: string; origin?: string; 'sec-fetch-site'?: string },
  requireOrigin: boolean,
): void {
  const origin = headers.origin
  if (origin === undefined) {
    if (requireOrigin) throw new WebError('ORIGIN_REFUSED', 'refused: a WebSocket without an Origin header')
  } else if (origin.toLowerCase() !== `http://${headers.host ?? ''}`.toLowerCase()) {
    throw new WebError('ORIGIN_REFUSED', `refused: a cross-site request from origin "${origin}"`)
  }
  const site = headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    throw new WebError('ORIGIN_REFUSED', `refused: a ${site} request (Sec-Fetch-Site)`)
}
