import { actorOf } from '@dsh/authority-rules'

/** The kinds the audit reads: every change of authority, every grant, every approval asked and decided, every network decision. */
export const AUDITED_KINDS = [
  'permission/preset',
  'sandbox/mode',
  'approval/policy',
  'sandbox/probe',
  'shell/env-policy',
  'approval/asked',
  'approval/decided',
  'grant/added',
  'grant/revoked',
  'grant/ignored',
  'network/decision',
  'network/grant',
] as const
export type AuditKind = (typeof AUDITED_KINDS)[number]

/** Any logged event (the audit reads stored logs as they are, so it needs no plugin's types). */
export interface AuditableEvent {
  type: string
  seq: number
  time: number
  data: unknown
}

export interface AuditEntry {
  seq: number
  /** Epoch milliseconds, as logged. */
  time: number
  kind: AuditKind
  /** One line saying what happened, with what it changed from. */
  summary: string
  /** The event's data as logged. */
  data: any
}

interface Asked {
  tool: string
  summary: string
}

const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))
const names = (value: unknown) =>
  Array.isArray(value) ? (value.length ? value.map(text).join(', ') : 'nothing') : text(value)

const ANSWERS: Record<string, string> = {
  allow_once: 'ALLOWED once',
  allow_session: 'ALLOWED for this session',
  allow_always: 'ALLOWED always in this workspace',
  reject: 'REJECTED',
}
const SCOPES: Record<string, string> = { session: 'for this session', workspace: 'always in this workspace' }

/**
 * Every authority change, probe, approval request and decision, network decision and grant of a session, in log order. Changes name what
 * they replace ("workspace-write → read-only"); decisions name the request they answer. Unknown shapes are
 * shown as they are, never dropped: an audit leaves nothing out.
 */
export function auditSession(events: readonly AuditableEvent[]): AuditEntry[] {
  const entries: AuditEntry[] = []
  const asked = new Map<string, Asked>()
  let mode: string | undefined
  let policy: string | undefined
  for (const event of events) {
    if (!(AUDITED_KINDS as readonly string[]).includes(event.type)) continue
    const kind = event.type as AuditKind
    const data = (event.data ?? {}) as Record<string, any>
    let summary: string
    switch (kind) {
      case 'permission/preset':
        summary = `preset ${text(data.preset)} chosen by ${actorOf(data)} (sandbox ${text(data.mode)}, approval ${text(data.approval)})`
        break
      case 'sandbox/mode':
        summary = `sandbox mode ${mode ? `${mode} → ` : 'set to '}${text(data.mode)} by ${actorOf(data)}`
        mode = text(data.mode)
        break
      case 'approval/policy':
        summary = `approval policy ${policy ? `${policy} → ` : 'set to '}${text(data.policy)} by ${actorOf(data)}`
        policy = text(data.policy)
        break
      case 'sandbox/probe':
        summary = `sandbox backend ${text(data.backend)} ${data.available ? 'available' : 'UNAVAILABLE'}: ${text(data.reason)}`
        break
      case 'shell/env-policy':
        summary = `command environment inherits ${names(data.inherited)}; sets ${names(data.set)}; include ${names(data.include)}; exclude ${names(data.exclude)}; withheld ${names(data.dropped)}`
        break
      case 'approval/asked':
        asked.set(text(data.requestId), { tool: text(data.tool), summary: text(data.summary) })
        summary = `approval asked for ${text(data.tool)} (${text(data.summary)}): ${text(data.reason)}${data.callId ? ` [call ${text(data.callId)}]` : ''}${data.rule ? ` [offers rule ${text(data.rule)}]` : ''}`
        break
      case 'approval/decided': {
        const request = asked.get(text(data.requestId))
        const what = request ? `${request.tool} (${request.summary})` : `request ${text(data.requestId)}`
        const by = data.actor ? `${text(data.by)} (${text(data.actor)})` : text(data.by)
        summary = `approval ${ANSWERS[text(data.answer)] ?? text(data.answer)} by ${by} for ${what}${data.note ? `: ${text(data.note)}` : ''}`
        break
      }
      case 'grant/added':
        summary = `grant ${text(data.id)} added by ${actorOf(data)}: ${text(data.rule)} ${SCOPES[text(data.scope)] ?? text(data.scope)}${data.requestId ? ` [request ${text(data.requestId)}]` : ''}`
        break
      case 'grant/revoked':
        summary = `grant ${text(data.id)} revoked by ${actorOf(data)}: ${text(data.rule)} ${SCOPES[text(data.scope)] ?? text(data.scope)}`
        break
      case 'grant/ignored':
        summary = `grant ${text(data.id)} in grants.yaml IGNORED: ${text(data.rule)} (claims ${text(data.claimedActor)}): ${text(data.reason)}`
        break
      case 'network/decision':
        summary = `network ${text(data.host)}:${text(data.port)} ${text(data.decision).toUpperCase()} by ${text(data.rule)}${data.address ? ` (address ${text(data.address)})` : ''}`
        break
      case 'network/grant': {
        const request = asked.get(text(data.requestId))
        summary = `network grant: ${text(data.host)} allowed for the rest of the session by ${request ? `the approval of "${request.summary}"` : `request ${text(data.requestId)}`}`
        break
      }
    }
    entries.push({ seq: event.seq, time: event.time, kind, summary, data: event.data })
  }
  return entries
}
