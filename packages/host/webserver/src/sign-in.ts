// How a browser signs in (docs/architecture.md, "Web"; decision 2026-12-01-web-sign-in-link): the printed
// link carries a single-use, short-lived code as the URL's userinfo (`http://dsh:<code>@host/auth/link`).
// Browsers send userinfo only as `Authorization: Basic` after a challenge and keep it out of history; the
// host answers a good code with an HttpOnly SameSite=Strict cookie and a redirect to `/`. The cookie's
// value is the long-lived secret: it is never in a URL, a page's script or a log line.
import { createHash, randomBytes } from 'node:crypto'
import { WebError } from './errors.ts'

/** The path the printed link opens. */
export const LINK_PATH = '/auth/link'
/** The userinfo name of the link; only the password (the code) matters. */
export const LINK_USER = 'dsh'
/** What a used, expired or unknown link is told, wherever it is refused. */
export const LINK_REFUSED_HINT = 'run `dsh web` again, or press Enter in the terminal running it, for a new link'

export type Redeemed = 'ok' | 'used' | 'expired' | 'unknown'

const digest = (secret: string) => createHash('sha256').update(secret).digest('hex')
const freshSecret = () => randomBytes(32).toString('base64url')

/**
 * The codes handed out and the browser sessions they became. Only digests are kept, so a lookup leaks no
 * timing about a secret and a heap dump holds no usable value. A code is spent by its first use, good or not.
 */
export class SignIns {
  private readonly codes = new Map<string, { expiresAt: number; spent: boolean }>()
  private readonly sessions = new Set<string>()

  constructor(private readonly codeTtlMs: number) {}

  /** A new single-use code, good for `codeTtlMs`. */
  issueCode(now = Date.now()): string {
    for (const [key, entry] of this.codes) if (entry.expiresAt <= now) this.codes.delete(key)
    const code = freshSecret()
    this.codes.set(digest(code), { expiresAt: now + this.codeTtlMs, spent: false })
    return code
  }

  /** Spends `code`: `ok` the first time within its lifetime, and never again. */
  redeem(code: string, now = Date.now()): Redeemed {
    const entry = this.codes.get(digest(code))
    if (!entry) return 'unknown'
    if (entry.spent) return 'used'
    entry.spent = true
    return entry.expiresAt > now ? 'ok' : 'expired'
  }

  /** A new browser session; its value goes into the cookie and nowhere else. */
  openSession(): string {
    const value = freshSecret()
    this.sessions.add(digest(value))
    return value
  }

  isSession(value: string | undefined): boolean {
    return !!value && this.sessions.has(digest(value))
  }
}

/** One cookie per port: cookies ignore ports, and two launches on one machine must not sign each other out. */
export function cookieName(port: number): string {
  return `dsh_web_${port}`
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's request carries it),
 * Path=/, no Expires (it ends with the browser session). Not `Secure`: the host speaks plain HTTP on loopback,
 * and a Secure cookie would never be sent back.
 */
export function sessionCookie(port: number, value: string): string {
  return `${cookieName(port)}=${value}; HttpOnly; SameSite=Strict; Path=/`
}

/** The value of cookie `name` in a `Cookie` header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The password of `Authorization: Basic <base64(user:password)>`, which is where a link's code arrives. */
export function basicPassword(header: string | undefined): string | undefined {
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim()) : null
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : decoded.slice(colon + 1)
}

/** Refuses a request that carries no valid session cookie. */
export function checkSession(signIns: SignIns, cookieHeader: string | undefined, port: number): void {
  const value = readCookie(cookieHeader, cookieName(port))
  if (value === undefined) throw new WebError('SIGN_IN_REQUIRED', 'refused: this browser is not signed in to this dsh web (open the link dsh web printed in its terminal)')
  if (!signIns.isSession(value)) throw new WebError('SIGN_IN_INVALID', "refused: this browser's sign-in is not from this launch of dsh web (open the link it printed in its terminal)")
}

/** The link for one code: the code is the userinfo's password, so it is sent only after a challenge. */
export function linkFor(origin: string, code: string): string {
  const url = new URL(LINK_PATH, origin)
  url.username = LINK_USER
  url.password = code
  return url.href
}
