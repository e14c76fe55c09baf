// How a browser signs in (docs/architecture.md, "Web"; decision 2026-12-01-web-sign-in-link): the printed
// link carries a single-use, short-lived code as the URL's userinfo (`http://dsh:<code>@host/auth/link`).
// Browsers send userinfo only as `Authorization: Basic` after a challenge and keep it out of history; the
// host answers a good code with an HttpOnly SameSite=Strict cookie and a redirect to `/`. The cookie's
// value is the long-lived secret: it is never in a URL, a page's script or a log line. The cookie is signed
// with a key kept under $DSH_HOME (decision 2026-12-02-approval-rules-and-lasting-sign-in), so a restart of
// dsh web on the same DSH_HOME keeps every tab signed in until the sign-in expires or is signed out.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { WebError } from './errors.ts'

/** The path the printed link opens. */
export const LINK_PATH = '/auth/link'
/** Where the app signs its browser out (POST). */
export const SIGN_OUT_PATH = '/auth/sign-out'
/** The userinfo name of the link; only the password (the code) matters. */
export const LINK_USER = 'dsh'
/** What a used, expired or unknown link is told, wherever it is refused. */
export const LINK_REFUSED_HINT = 'run `dsh web` again, or press Enter in the terminal running it, for a new link'

export type Redeemed = 'ok' | 'used' | 'expired' | 'unknown'
/** What a session cookie's value is: good, past its expiry, signed out, or not made with this key. */
export type SessionState = 'ok' | 'expired' | 'signed-out' | 'invalid'

const digest = (secret: string) => createHash('sha256').update(secret).digest('hex')
const freshSecret = () => randomBytes(32).toString('base64url')

/**
 * The sign-ins that were signed out before they expired, kept in a file beside the key so every process on
 * the same DSH_HOME refuses them: `{ "<session id>": <expiresAt ms> }`, an entry dropped once it has expired
 * anyway. Re-read when the file changes. A file that cannot be read as that shape refuses every sign-in
 * (fail closed) with a message naming it.
 */
export class SignOuts {
  private seen: { mtimeMs: number; size: number; ids: Record<string, number> } | undefined

  constructor(readonly file: string) {}

  private read(): Record<string, number> {
    let stat
    try {
      stat = statSync(this.file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw error
    }
    if (this.seen && this.seen.mtimeMs === stat.mtimeMs && this.seen.size === stat.size) return this.seen.ids
    const parsed: unknown = JSON.parse(readFileSync(this.file, 'utf8'))
    if (
      !parsed ||
      typeof parsed !== 'object' ||
      Array.isArray(parsed) ||
      Object.values(parsed).some((value) => typeof value !== 'number')
    )
      throw new Error('not a map of session ids to expiry times')
    this.seen = { mtimeMs: stat.mtimeMs, size: stat.size, ids: parsed as Record<string, number> }
    return this.seen.ids
  }

  has(id: string): boolean {
    try {
      return Object.hasOwn(this.read(), id)
    } catch (error) {
      throw new WebError(
        'SIGN_IN_INVALID',
        `refused: the sign-out list ${this.file} cannot be read (${error instanceof Error ? error.message : error}); delete it to sign in again`,
      )
    }
  }

  add(id: string, expiresAt: number, now = Date.now()): void {
    let ids: Record<string, number> = {}
    try {
      ids = this.read()
    } catch {
      // An unreadable list is replaced: what it held was refused anyway, and this sign-out must be kept.
    }
    const kept = Object.fromEntries(Object.entries(ids).filter(([, at]) => at > now))
    kept[id] = expiresAt
    mkdirSync(dirname(this.file), { recursive: true })
    const temporary = `${this.file}.${process.pid}.tmp`
    writeFileSync(temporary, JSON.stringify(kept) + '\n', { mode: 0o600 })
    renameSync(temporary, this.file)
  }
}

const SESSION_TAG = 'dsh-web-session/1'
const sessionMac = (key: Buffer, id: string, expiresAt: number) =>
  createHmac('sha256', key).update(`${SESSION_TAG}\0${id}\0${expiresAt}`).digest('base64url')

/**
 * The codes handed out and the browser sessions they became. Codes are kept as digests only, so a lookup
 * leaks no timing about a secret and a heap dump holds no usable value; a code is spent by its first use,
 * good or not. A session is `<id>.<expiresAt>.<HMAC-SHA256 of both>` under the sign-in key: any process
 * holding the key (the same DSH_HOME) accepts it until it expires or its id is in the sign-out list.
 */
export class SignIns {
  private readonly codes = new Map<string, { expiresAt: number; spent: boolean }>()

  /**
   * `key`: the sign-in key (a random one per process makes sign-ins end with it). `sessionTtlMs`: how long a
   * sign-in lasts. `signOuts`: where signed-out sessions are listed.
   */
  constructor(
    private readonly codeTtlMs: number,
    private readonly sessionTtlMs: number,
    private readonly signOuts: SignOuts,
    private key: Buffer = randomBytes(32),
  ) {}

  /** Signs sessions with `key` from now on (the kept one, once it is read at start). */
  useKey(key: Buffer): void {
    this.key = key
  }

  get ttlMs(): number {
    return this.sessionTtlMs
  }

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

  /** A new browser session, good for `sessionTtlMs`; its value goes into the cookie and nowhere else. */
  openSession(now = Date.now()): string {
    const id = randomBytes(16).toString('base64url')
    const expiresAt = now + this.sessionTtlMs
    return `${id}.${expiresAt}.${sessionMac(this.key, id, expiresAt)}`
  }

  /** What a cookie's value is (the signature first: nothing else of an unsigned value is believed). */
  sessionOf(value: string | undefined, now = Date.now()): SessionState {
    const match = value ? /^([A-Za-z0-9_-]{22})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(value) : null
    if (!match) return 'invalid'
    const [, id, at, mac] = match as unknown as [string, string, string, string]
    const expected = Buffer.from(sessionMac(this.key, id, Number(at)))
    if (!timingSafeEqual(Buffer.from(mac), expected)) return 'invalid'
    if (Number(at) <= now) return 'expired'
    return this.signOuts.has(id) ? 'signed-out' : 'ok'
  }

  isSession(value: string | undefined, now = Date.now()): boolean {
    return this.sessionOf(value, now) === 'ok'
  }

  /** Signs a session out for every process on this DSH_HOME; a value that is not a good session is ignored. */
  signOut(value: string | undefined, now = Date.now()): boolean {
    if (!this.isSession(value, now)) return false
    const [id, at] = value!.split('.') as [string, string]
    this.signOuts.add(id, Number(at), now)
    return true
  }
}

/** One cookie per port: cookies ignore ports, and two launches on one machine must not sign each other out. */
export function cookieName(port: number): string {
  return `dsh_web_${port}`
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's request carries it),
 * Path=/, Max-Age the sign-in's lifetime (the value carries the same expiry, which is what the host checks).
 * Not `Secure`: the host speaks plain HTTP on loopback, and a Secure cookie would never be sent back.
 */
export function sessionCookie(port: number, value: string, maxAgeMs: number): string {
  return `${cookieName(port)}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(maxAgeMs / 1000)}`
}

/** The header that makes a browser forget the session cookie (sign-out). */
export function clearedCookie(port: number): string {
  return `${cookieName(port)}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`
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

/** Refuses a request that carries no valid session cookie, saying which of the ways it is not. */
export function checkSession(signIns: SignIns, cookieHeader: string | undefined, port: number): void {
  const value = readCookie(cookieHeader, cookieName(port))
  if (value === undefined)
    throw new WebError('SIGN_IN_REQUIRED', `refused: this browser is not signed in to this dsh web; ${SIGN_IN_HINT}`)
  const state = signIns.sessionOf(value)
  if (state === 'expired')
    throw new WebError('SIGN_IN_INVALID', `refused: this browser's sign-in has expired; ${SIGN_IN_HINT}`)
  if (state === 'signed-out')
    throw new WebError('SIGN_IN_INVALID', `refused: this browser was signed out; ${SIGN_IN_HINT}`)
  if (state !== 'ok')
    throw new WebError(
      'SIGN_IN_INVALID',
      `refused: this browser's sign-in is not from this dsh web (another DSH_HOME, or its key was replaced); ${SIGN_IN_HINT}`,
    )
}

/** What a signed-out browser is told to do. */
export const SIGN_IN_HINT =
  'open the sign-in link `dsh web` prints in its terminal (run `dsh web` again, or press Enter where it runs, for a new one)'

/** The link for one code: the code is the userinfo's password, so it is sent only after a challenge. */
export function linkFor(origin: string, code: string): string {
  const url = new URL(LINK_PATH, origin)
  url.username = LINK_USER
  url.password = code
  return url.href
}
