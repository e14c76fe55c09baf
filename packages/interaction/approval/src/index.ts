import { randomUUID } from 'node:crypto'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'

export const APPROVAL_POLICIES = ['ask', 'never'] as const
/** `ask`: a person decides each request; `never`: every request is rejected (it never allows). */
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number]

export type ApprovalAnswer = 'allow_once' | 'reject'

/** Who or what decided: a person, the policy, a timeout, nobody able to answer, or a cancelled turn. */
export type DecidedBy = 'user' | 'policy' | 'timeout' | 'no-answerer' | 'cancelled' | 'error'

export interface ApprovalRequest {
  requestId: string
  sessionId: string
  agentId: string
  callId?: string
  tool: string
  /** Short human summary of what would happen (`bash: rm -rf build`). */
  summary: string
  /** Why approval is needed (the tool's or the policy's words). */
  reason: string
}

export interface ApprovalDecision {
  answer: ApprovalAnswer
  by: DecidedBy
  note?: string
}

/** Asks someone (a terminal, a browser tab, an SDK client, an editor). Must settle or honour `signal`. */
export type Answerer = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>

declare module '@dsh/session' {
  interface SessionEventMap {
    'approval/asked': Omit<ApprovalRequest, 'sessionId'>
    'approval/decided': { requestId: string; answer: ApprovalAnswer; by: DecidedBy; note?: string }
    'approval/policy': { policy: ApprovalPolicy }
  }
}

declare module '@dsh/cordis' {
  interface Context {
    approval: Approval
  }
}

export interface Config {
  policy: ApprovalPolicy
  timeoutMs: number
}

/**
 * Approvals (DESIGN §8; docs/architecture.md, "Authority"). Owns: the request/decision protocol, the policy
 * in force (from the log), answerers, and fail-closed semantics: no answerer, a timeout, a cancelled turn or
 * a throwing answerer is a rejection. Every request and decision is a log event. Must not own: when to ask
 * (tools and the pre-execute policy decide that).
 */
export default class Approval extends Service {
  static inject = ['sessions']
  static Config: Schema<Config> = Schema.object({
    policy: Schema.union(APPROVAL_POLICIES).default('ask').description('Policy for sessions that have not chosen one (`never` rejects every request).'),
    timeoutMs: Schema.natural().default(300_000).description('An unanswered request is rejected after this long (0: wait until the turn is cancelled).'),
  })

  private readonly answerers: { ctx: Context; answer: Answerer }[] = []

  constructor(ctx: Context, private readonly config: Config) {
    super(ctx, 'approval')
    ctx.sessions.defineKind(ctx, 'approval/asked')
    ctx.sessions.defineKind(ctx, 'approval/decided')
    ctx.sessions.defineKind(ctx, 'approval/policy', { validate: (data) => (APPROVAL_POLICIES.includes(data?.policy) ? undefined : `policy must be ${APPROVAL_POLICIES.join(' or ')}`) })
  }

  /** Registers someone who can answer, for as long as `ctx` lives. The most recent answerer is asked. */
  answerer(ctx: Context, answer: Answerer): void {
    ctx.effect(() => {
      const entry = { ctx, answer }
      this.answerers.push(entry)
      return () => this.answerers.splice(this.answerers.indexOf(entry), 1)
    }, 'approval answerer')
  }

  get canAsk(): boolean {
    return this.answerers.length > 0
  }

  /** The policy in force for a session: its last `approval/policy` event, else the configured default. */
  policy(session: Session): ApprovalPolicy {
    return session.last('approval/policy')?.data.policy ?? this.config.policy
  }

  setPolicy(session: Session, policy: ApprovalPolicy): void {
    if (this.policy(session) !== policy || !session.last('approval/policy')) session.append('approval/policy', { policy })
  }

  /** Asks for approval. Never throws and never allows by accident: every anomaly is a logged rejection. */
  async request(session: Session, input: Omit<ApprovalRequest, 'requestId' | 'sessionId'>, signal: AbortSignal): Promise<ApprovalDecision> {
    const request: ApprovalRequest = { requestId: randomUUID(), sessionId: session.id, ...input }
    const { sessionId: _omit, ...asked } = request
    session.append('approval/asked', asked)
    const decision = await this.decide(session, request, signal)
    session.append('approval/decided', { requestId: request.requestId, answer: decision.answer, by: decision.by, ...(decision.note ? { note: decision.note } : {}) })
    await session.flush()
    return decision
  }

  private async decide(session: Session, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    if (this.policy(session) === 'never') return { answer: 'reject', by: 'policy', note: 'the approval policy is "never"' }
    const answerer = this.answerers.at(-1)
    if (!answerer) return { answer: 'reject', by: 'no-answerer', note: 'nobody can answer approvals in this session' }
    if (signal.aborted) return { answer: 'reject', by: 'cancelled' }
    const local = new AbortController()
    const onAbort = () => local.abort()
    signal.addEventListener('abort', onAbort, { once: true })
    let timer: NodeJS.Timeout | undefined
    try {
      const outcome = await new Promise<ApprovalDecision>((resolve) => {
        if (this.config.timeoutMs > 0) timer = setTimeout(() => resolve({ answer: 'reject', by: 'timeout', note: `no answer within ${this.config.timeoutMs} ms` }), this.config.timeoutMs)
        local.signal.addEventListener('abort', () => resolve({ answer: 'reject', by: 'cancelled' }), { once: true })
        answerer.answer(request, local.signal).then(
          (answer) => resolve(answer === 'allow_once' ? { answer, by: 'user' } : { answer: 'reject', by: 'user' }),
          (error) => resolve({ answer: 'reject', by: 'error', note: String(error?.message ?? error) }),
        )
      })
      return outcome
    } finally {
      if (timer) clearTimeout(timer)
      local.abort()
      signal.removeEventListener('abort', onAbort)
    }
  }
}
