import { isIP } from 'node:net'
import type { NetworkDecision } from '@dsh/network'
import { exactly, isPublicAddress, matches } from './rules.ts'

/** Resolves a host name to its addresses (the proxy connects to the one it checked: no second lookup). */
export type Resolver = (host: string) => Promise<string[]>

/** A person's answer to an unknown host, or why nobody could give one. */
export type Approval = { allowed: true; requestId: string } | { allowed: false; rule: string }

export interface DecisionInput {
  host: string
  port: number
  allow: readonly string[]
  deny: readonly string[]
  /** Hosts approved earlier in the session (from its `network/grant` events). */
  granted: readonly string[]
  /** A loopback or private address only by an exact allow entry: no grant, no question (the client asked). */
  strictPrivate?: boolean
  resolve: Resolver
  /** Asks about a host no rule names; `privateAddress` is set when it resolved to one. */
  ask(privateAddress: string | undefined): Promise<Approval>
}

export type Outcome =
  | { decision: NetworkDecision & { decision: 'allowed' | 'approved'; address: string }; grant?: string }
  | { decision: NetworkDecision & { decision: 'refused' }; why: Refusal }

/** Why a connection was refused, for the message the command reads. */
export type Refusal =
  | { kind: 'denied'; pattern: string }
  | { kind: 'not-allowed' }
  | { kind: 'private'; address: string; pattern: string }
  | { kind: 'private-unlisted'; address: string }
  | { kind: 'rejected' }
  | { kind: 'lookup'; detail: string }

/**
 * One connection's decision. Deny wins over everything; then a loopback or private address is admitted only
 * by an exact `network.allow` entry (or a person's approval that was told about it), never by a wildcard, so
 * a public name that resolves to 127.0.0.1 (DNS rebinding) cannot reach the host; then allow rules, then the
 * session's grants; then a person is asked, when someone can answer.
 */
export async function decide(input: DecisionInput): Promise<Outcome> {
  const { host, port } = input
  const refused = (rule: string, why: Refusal, address?: string): Outcome => ({
    decision: { host, port, decision: 'refused', rule, ...(address ? { address } : {}) },
    why,
  })
  const denied = input.deny.find((pattern) => matches(pattern, host))
  if (denied) return refused(`network.deny "${denied}"`, { kind: 'denied', pattern: denied })

  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : await input.resolve(host)
    if (!addresses.length) throw new Error('no address')
  } catch (error) {
    const detail = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    return refused('lookup failed', { kind: 'lookup', detail })
  }
  const address = addresses[0]!
  const privateAddress = addresses.find((candidate) => !isPublicAddress(candidate))
  const allowed =
    input.allow.find((pattern) => exactly(pattern, host)) ?? input.allow.find((pattern) => matches(pattern, host))
  if (allowed) {
    if (privateAddress && !exactly(allowed, host))
      return refused(
        `network.allow "${allowed}" is a wildcard: not for a private address`,
        { kind: 'private', address: privateAddress, pattern: allowed },
        privateAddress,
      )
    return { decision: { host, port, decision: 'allowed', rule: `network.allow "${allowed}"`, address } }
  }
  if (privateAddress && input.strictPrivate)
    return refused(
      'a private address needs an exact network.allow entry (strict client)',
      { kind: 'private-unlisted', address: privateAddress },
      privateAddress,
    )
  if (input.granted.includes(host))
    return { decision: { host, port, decision: 'allowed', rule: 'session grant', address } }
  const answer = await input.ask(privateAddress)
  if (!answer.allowed)
    return refused(
      answer.rule,
      answer.rule === 'approval rejected' ? { kind: 'rejected' } : { kind: 'not-allowed' },
      privateAddress,
    )
  return { decision: { host, port, decision: 'approved', rule: 'approval', address }, grant: answer.requestId }
}
