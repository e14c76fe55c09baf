import { randomUUID } from 'node:crypto'
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import type {} from '@dsh/cmdline'
import { WS_PROTOCOL } from '@dsh/web-protocol'
import { checkWire, WEB_METHOD_SCHEMAS } from '@dsh/web-protocol/schema'
import { WebSocketServer, type WebSocket } from 'ws'
import { serveAsset } from './assets.ts'
import { describeFailure, WebError } from './errors.ts'
import { readFlags, type Listen } from './flags.ts'
import { OpenableFolders } from './folders.ts'
import { checkHost, checkOrigin, isLoopbackAddress, isLoopbackName } from './guard.ts'
import { defaultBrowserCommand, openBrowser, overSsh } from './open.ts'
import { join } from 'node:path'
import { ensureSecretKey } from '@dsh/secret-key'
import { signedOutPage } from './signed-out.ts'
import {
  basicPassword,
  checkSession,
  clearedCookie,
  cookieName,
  LINK_PATH,
  LINK_REFUSED_HINT,
  LINK_USER,
  linkFor,
  readCookie,
  sessionCookie,
  SIGN_OUT_PATH,
  SignIns,
  SignOuts,
} from './sign-in.ts'
import { SocketClient, type ChannelSpec } from './socket-client.ts'

declare module '@dsh/cordis' {
  interface Context {
    webserver: Webserver
  }
}

/** Who is calling an API method. */
export interface CallInfo {
  remoteAddress: string
  /** The peer is on this machine (a loopback address). */
  local: boolean
}

/**
 * One `POST /api/<name>` method, registered by a plugin. Its params are checked by the host against the one
 * wire schema, `WEB_METHOD_SCHEMAS[name].params` (`@dsh/web-protocol/schema`), before `handle` runs.
 */
export interface MethodSpec<P = any, R = unknown> {
  /** Writes that change the user's configuration or secrets: refused unless the peer is loopback. */
  localOnly?: boolean
  handle(params: P, call: CallInfo): R | Promise<R>
}

export interface Config {
  host: string
  port: number
  open: boolean
  announce: boolean
  trustedHosts: string[]
  maxBodyBytes: number
  maxMessageBytes: number
  maxBufferedBytes: number
  browserCommand: string[]
  codeTtlMs: number
  newLinkOnEnter: boolean
  home: string
  allowRoots: string[]
  sessionTtlMs: number
  keyFile: string
  signOutsFile: string
}

/**
 * The web surface's host (D+P): one HTTP server on loopback with a JSON API
 * (`POST /api/<method>`), a WebSocket stream (`/ws`) and the app's files. Owns: listening, the sign-in
 * (single-use link codes, session cookies), the Host/Origin/sign-in/loopback checks every call passes, and
 * the registries plugins fill (methods, channels, assets). Must not own: what any method does (the web-*
 * plugins) or the page.
 */
export class Webserver extends Service {
  static inject = ['app', 'cmdlineArgs']
  static Config: Schema<Config> = Schema.object({
    host: Schema.string()
      .default('127.0.0.1')
      .description('Address to listen on (`--host`); loopback unless listed in trustedHosts.'),
    port: Schema.natural().max(65535).default(3080).description('Port to listen on (`--port`; 0 picks a free one).'),
    open: Schema.boolean()
      .default(true)
      .description('Open the default browser at start (never over SSH; `--no-open` turns it off).'),
    announce: Schema.boolean()
      .default(true)
      .description('Print the sign-in link (with its single-use code) on stdout at start.'),
    trustedHosts: Schema.array(Schema.string())
      .default([])
      .description(
        'Host names accepted besides loopback (Host header and `--host`). The sign-in cookie is then the only protection; settings and credential writes stay loopback-only.',
      ),
    maxBodyBytes: Schema.natural()
      .default(8 * 1024 * 1024)
      .description('Largest API request body.'),
    maxMessageBytes: Schema.natural()
      .default(64 * 1024)
      .description('Largest WebSocket message a tab may send.'),
    maxBufferedBytes: Schema.natural()
      .default(16 * 1024 * 1024)
      .description('Unsent bytes a slow tab may hold before it is disconnected (it reconnects and resumes).'),
    browserCommand: Schema.array(Schema.string())
      .default([])
      .description('Command that opens a URL (empty: open / xdg-open / start by platform).'),
    codeTtlMs: Schema.natural()
      .default(60_000)
      .description('How long the single-use code of a sign-in link is accepted.'),
    newLinkOnEnter: Schema.boolean()
      .default(true)
      .description(
        'When stdin is a terminal, Enter prints a fresh sign-in link (for a second browser, or after the first link expired).',
      ),
    home: Schema.string()
      .default('')
      .description("The user's home folder as the web app offers it (empty: the operating system's)."),
    sessionTtlMs: Schema.natural()
      .min(60_000)
      .default(30 * 24 * 3600_000)
      .description(
        'How long a browser stays signed in (30 days); it then needs a new link. Sign out ends it sooner, in every dsh web on this DSH_HOME.',
      ),
    keyFile: Schema.string()
      .default('web.key')
      .description(
        'The secret that signs sign-in cookies, so a sign-in survives a restart on loopback; made on first use (0600), relative to $DSH_HOME (or absolute). It must stay unreadable to confined commands: $DSH_HOME/web.key is a built-in secret path; elsewhere, add it to sandbox.denyRead. Deleting it signs every browser out.',
      ),
    signOutsFile: Schema.string()
      .default('web-signouts.json')
      .description('The sign-ins signed out before they expired, relative to $DSH_HOME (or absolute).'),
    allowRoots: Schema.array(Schema.string())
      .default([])
      .description(
        'Folders a tab may browse and open sessions in besides the home and the launch folder (`--allow-root <dir>` adds more).',
      ),
  })

  private readonly listen: Listen
  /** What a tab may browse and open a session in (the picker, `sessions.create`). */
  readonly folders: OpenableFolders
  private readonly signIns: SignIns
  private readonly methods = new Map<string, MethodSpec>()
  private readonly channels = new Map<string, ChannelSpec>()
  private readonly clients = new Set<{ client: SocketClient; socket: WebSocket }>()
  private assetsDir: string | undefined
  private started: Promise<void> | undefined
  private disposed = false
  private running: { server: Server; sockets: WebSocketServer } | undefined
  private address: AddressInfo | undefined
  private stopLinksOnEnter: (() => void) | undefined

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'webserver')
    this.signIns = new SignIns(
      config.codeTtlMs,
      config.sessionTtlMs,
      new SignOuts(join(ctx.app.home, config.signOutsFile)),
    )
    this.listen = readFlags(
      ctx.cmdlineArgs,
      { host: config.host, port: config.port, open: config.open },
      config.trustedHosts,
    )
    this.folders = new OpenableFolders(config.home, ctx.app.cwd, [...config.allowRoots, ...this.listen.allowRoots])
    // The surface starts once every row has settled (not under `--check`, not in a tree a test boots): no
    // request can then reach a half-mounted tree, and `--check` neither binds the port nor opens a browser.
    ctx.on('app/launched', () => {
      this.start().then(
        () => this.greet(),
        (error: unknown) => {
          ctx.logger('webserver').error(error instanceof Error ? error.message : String(error))
          ctx.app.requestExit(1)
        },
      )
    })
    // Draining: stop taking calls first, so no new turn starts while the running ones are made durable.
    ctx.on('app/draining', () => this.stop())
    ctx.effect(
      () => () => {
        this.disposed = true
        return this.stop()
      },
      'web host',
    )
  }

  /** Starts listening (idempotent). The launcher's `app/launched` calls it; in-process tests call it directly. */
  start(): Promise<void> {
    return (this.started ??= this.open())
  }

  private async open(): Promise<void> {
    // On loopback a sign-in outlives this process: cookies are signed with the key kept under $DSH_HOME.
    // Elsewhere (a trusted host) each launch keeps its own random key, so a restart signs every browser out.
    if (isLoopbackName(this.listen.host))
      this.signIns.useKey(
        await ensureSecretKey(join(this.ctx.app.home, this.config.keyFile), 'every browser is then signed out'),
      )
    const server = createServer((req, res) => void this.onRequest(req, res))
    const sockets = new WebSocketServer({
      noServer: true,
      maxPayload: this.config.maxMessageBytes,
      handleProtocols: (offered) => (offered.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
    })
    server.on('upgrade', (req, socket, head) => this.onUpgrade(sockets, req, socket, head))
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EADDRINUSE')
          reject(
            new WebError(
              'UNAVAILABLE',
              `port ${this.listen.port} on ${this.listen.host} is in use (is another dsh web running?); pass --port <n>, or --port 0 for any free port`,
            ),
          )
        else reject(error)
      })
      server.listen({ host: this.listen.host, port: this.listen.port }, resolve)
    })
    this.running = { server, sockets }
    this.address = server.address() as AddressInfo
    if (this.disposed) await this.stop()
  }

  /**
   * Prints a sign-in link (its code included: the terminal is the user's) and opens the browser at it when it
   * can; the browser spends the code, and Enter in the terminal prints another for a second browser.
   */
  private greet(): void {
    const link = this.newLink()
    const tty = this.config.announce && this.config.newLinkOnEnter && !!process.stdin.isTTY
    if (this.config.announce)
      process.stdout.write(
        `dsh web is running at ${link}\n${tty ? 'Press Enter for a new link (another browser), Ctrl+C to stop.' : 'Press Ctrl+C to stop.'}\n`,
      )
    if (this.listen.open && !overSsh(process.env)) {
      const command = this.config.browserCommand.length
        ? this.config.browserCommand
        : defaultBrowserCommand(process.platform)
      openBrowser(command, link, (error) =>
        this.ctx.logger('webserver').debug(`could not open a browser: ${error.message}`),
      )
    }
    if (tty) this.printLinksOnEnter()
  }

  private printLinksOnEnter(): void {
    const onLine = () => {
      if (this.running)
        process.stdout.write(
          `New link (single use, ${Math.round(this.config.codeTtlMs / 1000)} s): ${this.newLink()}\n`,
        )
    }
    process.stdin.on('data', onLine)
    this.stopLinksOnEnter = () => {
      process.stdin.off('data', onLine)
      process.stdin.pause()
    }
  }

  /** The origin the host answers on (`http://127.0.0.1:3080`), once listening. */
  get url(): string {
    if (!this.address) throw new WebError('UNAVAILABLE', 'the web host is not listening yet')
    const host = this.listen.host.includes(':') ? `[${this.listen.host}]` : this.listen.host
    return `http://${host}:${this.address.port}`
  }

  get port(): number {
    return this.address?.port ?? this.listen.port
  }

  /**
   * A fresh sign-in link, `http://dsh:<code>@host:port/auth/link`: its code is good once, for `codeTtlMs`.
   * The code rides in the userinfo, which browsers keep out of history and send only as a Basic credential.
   */
  newLink(): string {
    return linkFor(this.url, this.signIns.issueCode())
  }

  /** Registers `POST /api/<name>` for as long as `ctx` lives. */
  method<P, R>(ctx: Context, name: WebMethodName, spec: MethodSpec<P, R>): void {
    // A method outside the wire table would have no params schema: refuse it where it is registered.
    if (!Object.hasOwn(WEB_METHOD_SCHEMAS, name))
      throw new Error(
        `web API method "${name}" is not in WEB_METHOD_SCHEMAS (@dsh/web-protocol/schema); declare its params and result there first`,
      )
    ctx.effect(() => {
      if (this.methods.has(name)) throw new Error(`web API method "${name}" is already registered`)
      this.methods.set(name, spec as MethodSpec)
      return () => this.methods.delete(name)
    }, `web method ${name}`)
  }

  /** Registers a WebSocket channel for as long as `ctx` lives. */
  channel(ctx: Context, name: string, spec: ChannelSpec): void {
    ctx.effect(() => {
      if (this.channels.has(name)) throw new Error(`web channel "${name}" is already registered`)
      this.channels.set(name, spec)
      return () => this.channels.delete(name)
    }, `web channel ${name}`)
  }

  /** Serves the built app from `dir` for as long as `ctx` lives. */
  assets(ctx: Context, dir: string): void {
    ctx.effect(() => {
      if (this.assetsDir) throw new Error(`the web host already serves an app from ${this.assetsDir}`)
      this.assetsDir = dir
      return () => void (this.assetsDir = undefined)
    }, 'web assets')
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('X-Content-Type-Options', 'nosniff')
    res.setHeader('Referrer-Policy', 'no-referrer')
    res.setHeader('X-Frame-Options', 'DENY')
    const pathname = new URL(req.url ?? '/', 'http://host').pathname
    const api = pathname.startsWith('/api/')
    try {
      checkHost(req.headers.host, this.port, this.config.trustedHosts)
      if (pathname === LINK_PATH) return this.onLink(req, res)
      if (pathname === SIGN_OUT_PATH) return this.onSignOut(req, res)
      if (api) return await this.onApi(pathname.slice('/api/'.length), req, res)
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new WebError('METHOD_NOT_ALLOWED', `${req.method} is not served here`)
      checkSession(this.signIns, req.headers.cookie, this.port)
      if (!this.assetsDir)
        throw new WebError('UNAVAILABLE', 'no web app is mounted (the web-app row is missing or disabled)')
      await serveAsset(this.assetsDir, req, res)
    } catch (error) {
      const failure = describeFailure(error)
      if (failure.status >= 500) this.ctx.logger('webserver').warn(`${req.method} ${pathname}: ${failure.message}`)
      if (res.headersSent) return void res.destroy()
      res.statusCode = failure.status
      res.setHeader('Cache-Control', 'no-store')
      if (api) {
        res.setHeader('Content-Type', 'application/json; charset=utf-8')
        res.end(JSON.stringify({ ok: false, error: { code: failure.code, message: failure.message } }))
      } else if (failure.code.startsWith('SIGN_IN_') || failure.code === 'LINK_REFUSED') {
        // A page a person sees (a reload of a signed-out tab, a used link): say what to do, styled, no script.
        res.setHeader('Content-Type', 'text/html; charset=utf-8')
        res.setHeader(
          'Content-Security-Policy',
          "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        )
        res.end(signedOutPage(failure.message))
      } else {
        res.setHeader('Content-Type', 'text/plain; charset=utf-8')
        res.end(`dsh: ${failure.message}\n`)
      }
    }
  }

  /**
   * `GET /auth/link`: a signed-in browser goes straight to the app; one without a credential is challenged
   * (the browser then sends the link's userinfo as Basic); a good code becomes a session cookie and a redirect
   * to the bare origin (absolute, so the browser drops the userinfo). A cross-site navigation is refused
   * before the code is looked at (no signing a browser in to someone else's session).
   */
  private onLink(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET')
      throw new WebError('METHOD_NOT_ALLOWED', `the sign-in link is opened with GET, not ${req.method}`)
    checkOrigin(req.headers, false)
    res.setHeader('Cache-Control', 'no-store')
    const app = `http://${req.headers.host}/`
    if (this.signIns.isSession(readCookie(req.headers.cookie, cookieName(this.port)))) return redirect(res, app)
    const code = basicPassword(req.headers.authorization)
    if (code === undefined) {
      res.statusCode = 401
      res.setHeader('WWW-Authenticate', `Basic realm="dsh web: the one-time code of the link", charset="UTF-8"`)
      res.setHeader('Content-Type', 'text/plain; charset=utf-8')
      return void res.end(
        `dsh: open the link dsh web printed in its terminal (${LINK_USER}:<code>@…); ${LINK_REFUSED_HINT}\n`,
      )
    }
    const redeemed = this.signIns.redeem(code)
    if (redeemed === 'used') throw new WebError('LINK_REFUSED', `this link was used; ${LINK_REFUSED_HINT}`)
    if (redeemed === 'expired')
      throw new WebError(
        'LINK_REFUSED',
        `this link has expired (a link is good for ${Math.round(this.config.codeTtlMs / 1000)} s); ${LINK_REFUSED_HINT}`,
      )
    if (redeemed === 'unknown')
      throw new WebError('LINK_REFUSED', `this link is not from this launch of dsh web; ${LINK_REFUSED_HINT}`)
    res.setHeader('Set-Cookie', sessionCookie(this.port, this.signIns.openSession(), this.signIns.ttlMs))
    redirect(res, app)
  }

  /**
   * `POST /auth/sign-out` from the app's own page: the sign-in is listed as signed out (for every dsh web on
   * this DSH_HOME, until it would have expired) and the browser is told to forget the cookie.
   */
  private onSignOut(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'POST') throw new WebError('METHOD_NOT_ALLOWED', `sign out with POST, not ${req.method}`)
    checkOrigin(req.headers, true)
    checkSession(this.signIns, req.headers.cookie, this.port)
    this.signIns.signOut(readCookie(req.headers.cookie, cookieName(this.port)))
    res.statusCode = 200
    res.setHeader('Set-Cookie', clearedCookie(this.port))
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Cache-Control', 'no-store')
    res.end(JSON.stringify({ ok: true, result: { signedOut: true } }))
  }

  private async onApi(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST')
      throw new WebError('METHOD_NOT_ALLOWED', `API methods are called with POST, not ${req.method}`)
    checkOrigin(req.headers, false)
    checkSession(this.signIns, req.headers.cookie, this.port)
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
      throw new WebError('UNSUPPORTED_MEDIA_TYPE', 'API requests send Content-Type: application/json')
    const body = await readBody(req, this.config.maxBodyBytes)
    let params: unknown = {}
    if (body.length) {
      try {
        params = JSON.parse(body.toString('utf8'))
      } catch {
        throw new WebError('BAD_JSON', 'the request body is not JSON')
      }
    }
    const spec = this.methods.get(name)
    if (!spec) throw new WebError('UNKNOWN_METHOD', `no API method "${name}" is mounted`)
    const remoteAddress = req.socket.remoteAddress ?? ''
    const local = isLoopbackAddress(remoteAddress)
    if (spec.localOnly && !local)
      throw new WebError(
        'LOCAL_ONLY',
        `${name} changes your configuration and is accepted only from this machine (loopback), not from ${remoteAddress}`,
      )
    const problem = checkWire(WEB_METHOD_SCHEMAS[name as WebMethodName].params, params)
    if (problem) throw new WebError('BAD_PARAMS', `${name}: ${fieldOf(problem.path)}: ${problem.message}`)
    const result = await spec.handle(params, { remoteAddress, local })
    res.statusCode = 200
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Cache-Control', 'no-store')
    res.end(JSON.stringify({ ok: true, result: result ?? null }))
  }

  private onUpgrade(sockets: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    try {
      checkHost(req.headers.host, this.port, this.config.trustedHosts)
      if (new URL(req.url ?? '/', 'http://host').pathname !== '/ws')
        throw new WebError('NOT_FOUND', 'the event stream is at /ws')
      checkOrigin(req.headers, true)
      checkSession(this.signIns, req.headers.cookie, this.port)
      const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((part) => part.trim())
      if (!offered.includes(WS_PROTOCOL))
        throw new WebError('BAD_PARAMS', `the WebSocket must offer the ${WS_PROTOCOL} subprotocol`)
    } catch (error) {
      const failure = describeFailure(error)
      socket.end(
        `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\ndsh: ${failure.message}\n`,
      )
      return
    }
    sockets.handleUpgrade(req, socket, head, (ws) => this.adopt(ws, req))
  }

  private adopt(socket: WebSocket, req: IncomingMessage): void {
    const log = this.ctx.logger('webserver')
    const client = new SocketClient(
      randomUUID(),
      isLoopbackAddress(req.socket.remoteAddress),
      socket,
      this.config,
      (name) => this.channels.get(name),
      (error) => log.debug(error),
    )
    const entry = { client, socket }
    this.clients.add(entry)
    socket.on('message', (data, binary) =>
      binary
        ? client.send({ ch: 'error', key: '', message: 'binary messages are not accepted' })
        : client.receive(data.toString()),
    )
    socket.on('close', () => {
      this.clients.delete(entry)
      void client.dispose()
    })
    socket.on('error', (error) => log.debug(error))
  }

  private async stop(): Promise<void> {
    this.stopLinksOnEnter?.()
    this.stopLinksOnEnter = undefined
    const running = this.running
    if (!running) return
    this.running = undefined
    const { server, sockets } = running
    for (const { client, socket } of this.clients) {
      socket.close(1001, 'dsh is stopping')
      await client.dispose()
    }
    this.clients.clear()
    sockets.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 303
  res.setHeader('Location', location)
  res.end()
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) throw new WebError('BODY_TOO_LARGE', `the request body is over ${limit} bytes`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

export type WebMethodName = keyof typeof WEB_METHOD_SCHEMAS

/** TypeBox's JSON pointer (`/images/0/data`) as a field name (`images.0.data`); the whole body is `params`. */
function fieldOf(pointer: string): string {
  return pointer ? pointer.slice(1).split('/').join('.') : 'params'
}
