import { lookup } from 'node:dns/promises'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import type {} from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import type { Context } from '@dsh/cordis'
import { Network, NetworkDecisionData, NetworkGrantData, type NetworkDecision } from '@dsh/network'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/settings'
import { decide, type Approval, type Resolver } from './decide.ts'
import { refusalMessage } from './messages.ts'
import { ProxyServer, type Admission } from './proxy-server.ts'
import { HOST_PATTERN } from './rules.ts'

export { decide, type Resolver } from './decide.ts'
export { isPublicAddress, matches, normalizeHost } from './rules.ts'

declare module '@dsh/settings' {
  interface Settings {
    'network.allow': string[]
    'network.deny': string[]
  }
}

export interface Config {
  allow: string[]
  deny: string[]
  socketDir: string
  connectTimeoutMs: number
}

const patterns = () => Schema.array(Schema.string().pattern(HOST_PATTERN))
const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: false })).map((entry) => entry.address)

/**
 * ctx.network: one HTTP proxy per session on a Unix socket, started by the first `endpoint(session)` and
 * closed with the session's agent (or this row). Every connection is decided by the `network.deny` /
 * `network.allow` settings, the session's grants, or a person (`ctx.approval`, when someone can answer),
 * and logged as `network/decision`; an approved host is logged as `network/grant` and stays allowed for
 * the session. Owns both kinds.
 */
export default class NetworkProxy extends Network {
  static inject = ['sessions', 'settings']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    allow: patterns()
      .default([])
      .description(
        'Default of the network.allow setting: hosts confined commands may reach through the proxy (`api.example.com`, `*.example.org`, `*`); a loopback or private address needs an exact entry.',
      ),
    deny: patterns()
      .default([])
      .description('Default of the network.deny setting: hosts always refused (deny wins over allow).'),
    socketDir: Schema.string()
      .default('')
      .description(
        'Directory for the per-session proxy sockets (each in its own 0700 directory); empty: the OS temp directory.',
      ),
    connectTimeoutMs: Schema.natural()
      .min(1)
      .default(10_000)
      .description('How long the proxy waits for an upstream connection (ms).'),
  })

  private readonly proxies = new Map<Session, Promise<ProxyServer>>()
  private readonly pendingApprovals = new Map<string, Promise<Approval>>()
  private readonly resolvers: Resolver[] = []

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx)
    ctx.sessions.defineKind(ctx, 'network/decision', { ignorable: true, schema: NetworkDecisionData })
    // Ignorable: dropping a grant only narrows what a session may reach.
    ctx.sessions.defineKind(ctx, 'network/grant', { ignorable: true, schema: NetworkGrantData })
    ctx.settings.define('network.allow', patterns().default(config.allow), {
      description:
        "Hosts confined commands may reach through dsh's proxy: `api.example.com`, `*.example.org` (subdomains), `*`. A loopback or private address (or a name resolving to one) needs an exact entry.",
    })
    ctx.settings.define('network.deny', patterns().default(config.deny), {
      description: 'Hosts confined commands may never reach (wins over network.allow and approvals).',
    })
    ctx.effect(() => () => this.closeAll(), 'close network proxies')
  }

  endpoint(session: Session): Promise<string> {
    let started = this.proxies.get(session)
    if (!started) {
      started = this.start(session)
      this.proxies.set(session, started)
      started.catch(() => this.proxies.delete(session))
    }
    return started.then((proxy) => proxy.socket)
  }

  /** Resolves names for the proxy instead of the system (tests map a name to a local server), while `ctx` lives. */
  useResolver(ctx: Context, resolver: Resolver): void {
    ctx.effect(() => {
      this.resolvers.push(resolver)
      return () => void this.resolvers.splice(this.resolvers.indexOf(resolver), 1)
    }, 'network resolver')
  }

  private async start(session: Session): Promise<ProxyServer> {
    const proxy = await ProxyServer.start({
      socketDir: this.config.socketDir || tmpdir(),
      connectTimeoutMs: this.config.connectTimeoutMs,
      admit: (host, port, signal, strictPrivate) => this.admit(session, host, port, signal, strictPrivate),
    })
    // The proxy lives as long as the agent working on the session (its scope), else as long as this row.
    this.ctx
      .get('agents')
      ?.bySession(session.id)
      ?.scope.effect(() => () => this.close(session, proxy), 'session network proxy')
    return proxy
  }

  private async close(session: Session, proxy: ProxyServer) {
    if ((await this.proxies.get(session)?.catch(() => undefined)) === proxy) this.proxies.delete(session)
    await proxy.close()
  }

  private async closeAll() {
    const proxies = [...this.proxies.values()]
    this.proxies.clear()
    await Promise.all(
      proxies.map((started) =>
        started.then(
          (proxy) => proxy.close(),
          () => {},
        ),
      ),
    )
  }

  private async admit(
    session: Session,
    host: string,
    port: number,
    signal: AbortSignal,
    strictPrivate: boolean,
  ): Promise<Admission> {
    const outcome = await decide({
      host,
      port,
      strictPrivate,
      allow: this.ctx.settings.get('network.allow'),
      deny: this.ctx.settings.get('network.deny'),
      granted: session.all('network/grant').map((event) => event.data.host),
      resolve: this.resolvers.at(-1) ?? systemResolver,
      ask: (privateAddress) => this.ask(session, host, port, privateAddress, signal),
    })
    if (session.closed)
      return { ok: false, status: 403, message: `dsh: network not allowed: ${host} (the session is closed)` }
    this.log(session, outcome.decision)
    if ('why' in outcome)
      return {
        ok: false,
        status: outcome.why.kind === 'lookup' ? 502 : 403,
        message: refusalMessage(host, outcome.why, this.settingsFile()),
      }
    if (outcome.grant && !session.all('network/grant').some((event) => event.data.host === host)) {
      session.append('network/grant', { host, requestId: outcome.grant })
      await session.flush()
    }
    return { ok: true, address: outcome.decision.address }
  }

  private log(session: Session, decision: NetworkDecision) {
    if (!session.closed) session.append('network/decision', decision)
  }

  /** One question per host at a time: parallel connections to the same unknown host share the answer. */
  private ask(
    session: Session,
    host: string,
    port: number,
    privateAddress: string | undefined,
    signal: AbortSignal,
  ): Promise<Approval> {
    const key = `${session.id}\0${host}`
    let pending = this.pendingApprovals.get(key)
    if (!pending) {
      pending = this.request(session, host, port, privateAddress, signal).finally(() =>
        this.pendingApprovals.delete(key),
      )
      this.pendingApprovals.set(key, pending)
    }
    return pending
  }

  private async request(
    session: Session,
    host: string,
    port: number,
    privateAddress: string | undefined,
    signal: AbortSignal,
  ): Promise<Approval> {
    const approval = this.ctx.get('approval')
    const agent = this.ctx.get('agents')?.bySession(session.id)
    const rule = `network(${host})`
    // A standing grant (`allow_always` in an earlier session, or `permissions.allow`) answers without anyone asked.
    if (!approval || !(approval.canAsk || approval.canGrant({ rule })) || !agent || session.closed)
      return { allowed: false, rule: 'not in network.allow, nobody can approve' }
    const where = privateAddress ? ` (it resolves to the private address ${privateAddress})` : ''
    const summary = `connect to ${host}:${port}`
    const decision = await approval.request(
      session,
      {
        agentId: agent.id,
        tool: 'network',
        summary,
        reason: `this session (a confined command, or web_fetch) asks to reach ${host}${where}, which network.allow does not list; allowing it allows ${host} for the rest of this session (or, always, in this workspace)`,
        rule,
      },
      signal,
    )
    if (decision.answer === 'reject')
      return {
        allowed: false,
        rule: decision.by === 'no-answerer' ? 'not in network.allow, nobody can approve' : 'approval rejected',
      }
    // One question per host is open at a time, so the last network question with this summary is ours.
    const asked = session
      .all('approval/asked')
      .findLast((event) => event.data.tool === 'network' && event.data.summary === summary)
    return { allowed: true, requestId: asked?.data.requestId ?? '' }
  }

  /** The settings file as a person would type it (`~/.dsh/settings.yaml`). */
  private settingsFile(): string {
    const home = this.ctx.get('app')?.home
    if (!home) return 'the settings file'
    const file = join(home, 'settings.yaml')
    return file.startsWith(homedir() + '/') ? `~${file.slice(homedir().length)}` : file
  }
}
