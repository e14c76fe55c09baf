import { type Context, Service } from '@dsh/cordis'
import { oneOf, Type, type Session, type Static } from '@dsh/session'

/** How one connection attempt was decided: by a rule, by a refusal, or by a person's approval just now. */
export const NETWORK_VERDICTS = ['allowed', 'refused', 'approved'] as const
export type NetworkVerdict = (typeof NETWORK_VERDICTS)[number]

/**
 * A header a client of the proxy sends (`1`) to make its own connection stricter: a loopback or private address
 * is then admitted only by an exact `network.allow` entry — never by a grant, an approval or `--approve`.
 * It can only narrow what the sender reaches, so any client may send it; `web_fetch` always does.
 */
export const STRICT_PRIVATE_HEADER = 'x-dsh-strict-private'

// Each network kind's type and its check are one TypeBox schema (issue #28.6).

/** One network decision of a session's proxy, as it is logged (`network/decision`). */
export const NetworkDecisionData = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  decision: oneOf(NETWORK_VERDICTS),
  /** What decided, readable: `network.allow "api.example.com"`, `network.deny "*.evil.org"`, `session grant`, `nobody can approve`… */
  rule: Type.String(),
  /** The address connected to (or that made the refusal), when the name was resolved. */
  address: Type.Optional(Type.String()),
})
export type NetworkDecision = Static<typeof NetworkDecisionData>

/** A host a person approved for the rest of the session (`network/grant`), with the approval that did it. */
export const NetworkGrantData = Type.Object({ host: Type.String({ minLength: 1 }), requestId: Type.String() })
export type NetworkGrant = Static<typeof NetworkGrantData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'network/decision': NetworkDecision
    'network/grant': NetworkGrant
  }
}

declare module '@dsh/cordis' {
  interface Context {
    network: Network
  }
}

/**
 * The network confined commands may reach (docs/architecture.md, "Authority: network"). Owns:
 * each session's proxy endpoint, started on demand and closed when the session's agent ends, and the
 * decision of which host:port a connection through it may reach. Must not own: the namespace the command
 * runs in and the bridge into it (ctx.sandbox), or which mode gets which network (ctx.sandboxPolicy).
 */
export abstract class Network extends Service {
  constructor(ctx: Context) {
    super(ctx, 'network')
  }

  /** The Unix socket path of the session's proxy (an HTTP proxy: CONNECT and absolute-URI requests). */
  abstract endpoint(session: Session): Promise<string>
}
