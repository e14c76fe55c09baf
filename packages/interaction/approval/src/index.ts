import { randomUUID } from 'node:crypto'
import { assertActor, AUTHORITY_ACTORS, ruleProblem, type AuthorityActor } from '@dsh/authority-rules'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { checkShape, oneOf, Type, type Session, type Static } from '@dsh/session'
import { contributeApprovalsSection } from './prompt.ts'

export const APPROVAL_POLICIES = ['ask', 'never'] as const
/** `ask`: a person decides each request; `never`: every request is rejected (it never allows). */
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number]

export const APPROVAL_ANSWERS = ['allow_once', 'allow_session', 'allow_always', 'reject'] as const
/**
 * `allow_once`: this call only; `allow_session`: also store the request's `rule` as a grant for this session;
 * `allow_always`: store it for every session in this workspace. A grant answer to a request without a rule
 * (or with no grant store mounted, or from an answerer that named no actor) allows once only.
 */
export type ApprovalAnswer = (typeof APPROVAL_ANSWERS)[number]
export type GrantScope = 'session' | 'workspace'

/** Who or what decided: a person, the policy, a timeout, nobody able to answer, or a cancelled turn. */
export const DECIDED_BY = ['user', 'policy', 'grant', 'timeout', 'no-answerer', 'cancelled', 'error'] as const
export type DecidedBy = (typeof DECIDED_BY)[number]

// The approval kinds' types and checks are one TypeBox schema each (issue #28.6).
const actor = oneOf(AUTHORITY_ACTORS)

/** A request as `approval/asked` logs it (`rule` is also checked to parse). */
const ApprovalAskedData = Type.Object({
  requestId: Type.String(),
  agentId: Type.String(),
  callId: Type.Optional(Type.String()),
  tool: Type.String(),
  /** Short human summary of what would happen (`bash: rm -rf build`). */
  summary: Type.String(),
  /** Why approval is needed (the tool's or the policy's words). */
  reason: Type.String(),
  /**
   * The grant rule (`bash(npm test *)`, `network(api.example.org)`) an `allow_session` / `allow_always` answer
   * stores. Absent: only `allow_once` and `reject` may be offered.
   */
  rule: Type.Optional(Type.String()),
})

/** `message`: the answerer's words to the model; `edited`: the call runs with the answerer's arguments (`tool/edited` holds them). */
const ApprovalDecidedData = Type.Object({
  requestId: Type.String(),
  answer: oneOf(APPROVAL_ANSWERS),
  by: oneOf(DECIDED_BY),
  note: Type.Optional(Type.String()),
  actor: Type.Optional(actor),
  message: Type.Optional(Type.String()),
  edited: Type.Optional(Type.Literal(true)),
  rule: Type.Optional(Type.String()),
})

const ApprovalPolicyData = Type.Object({ policy: oneOf(APPROVAL_POLICIES), actor })
/** Logs written before actors were recorded hold none (the audit shows `unknown`); the policy is checked as on append. */
const StoredApprovalPolicyData = Type.Object({ policy: oneOf(APPROVAL_POLICIES), actor: Type.Optional(actor) })

export interface ApprovalRequest extends Static<typeof ApprovalAskedData> {
  sessionId: string
  /**
   * The call's arguments, for answerers that show (or edit) the structured call. Not copied into
   * `approval/asked`: the log holds them once, in `tool/call`.
   */
  arguments?: Record<string, unknown>
}

/**
 * An answer with more than the choice: `message` (with `reject`) is what the model reads about the refusal;
 * `arguments` (with `allow_once` only) are the arguments the call runs with instead of the model's.
 */
export interface ApprovalReply {
  answer: ApprovalAnswer
  message?: string
  arguments?: Record<string, unknown>
  /**
   * With `allow_session` / `allow_always`: the rule to keep instead of the request's (a person edited the
   * suggestion). It is kept only if the grant store finds it parses and covers this very call.
   */
  rule?: string
}

export interface ApprovalDecision {
  answer: ApprovalAnswer
  by: DecidedBy
  note?: string
  /** Who answered, when a person or client did (the answerer's registered actor). */
  actor?: AuthorityActor
  /** The answerer's words to the model about a refusal. */
  message?: string
  /** The arguments the answerer allowed the call with, replacing the model's (allow_once only). */
  arguments?: Record<string, unknown>
  /** The rule the answerer wrote in place of the request's (a grant answer only). */
  rule?: string
}

/** A standing grant an answer asks to store. */
export interface GrantRequest {
  rule: string
  scope: GrantScope
  actor: AuthorityActor
  requestId: string
}

/**
 * Where grants live (the grants plugin registers one). `check` answers a request from grants already held
 * (allow, deny, or undefined to ask); `store` records a new grant and throws when it cannot.
 */
export interface GrantStore {
  check(
    session: Session,
    request: ApprovalRequest,
  ): 'allow' | 'deny' | undefined | Promise<'allow' | 'deny' | undefined>
  store(session: Session, grant: GrantRequest): Promise<void>
  /**
   * Checks a rule a person wrote in place of the request's: returns it normalized, or throws saying why it
   * cannot be kept (it does not parse, or does not cover the call being approved).
   */
  checkRule(session: Session, request: ApprovalRequest, rule: string): string
}

export interface AnswererOptions {
  /** Who answers through this answerer. Without one, grant answers allow once only (nobody to record). */
  actor?: AuthorityActor
}

/**
 * Chooses who is asked about a request (a subagent's go to its parent's answerer): returns the request as the
 * answerer should see it (another `sessionId`, a longer summary), a string to refuse it with that note, or
 * undefined to leave it alone. The log keeps the request as made, in the session that made it.
 */
export type ApprovalRouter = (request: ApprovalRequest) => ApprovalRequest | string | undefined

/** Asks someone (a terminal, a browser tab, an SDK client, an editor). Must settle or honour `signal`. */
export type Answerer = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer | ApprovalReply>

declare module '@dsh/session' {
  interface SessionEventMap {
    'approval/asked': Static<typeof ApprovalAskedData>
    /** `message`: the answerer's words to the model; `edited`: the call runs with the answerer's arguments (`tool/edited` holds them); `rule`: the rule the answerer wrote in place of the request's, as kept. */
    'approval/decided': Static<typeof ApprovalDecidedData>
    /** `actor` is absent only in logs written before actors were recorded (the audit shows `unknown`). */
    'approval/policy': Static<typeof ApprovalPolicyData>
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
 * Approvals (docs/architecture.md, "Authority"). Owns: the request/decision protocol, the policy
 * in force (from the log), answerers, and fail-closed semantics: no answerer, a timeout, a cancelled turn or
 * a throwing answerer is a rejection. Every request and decision is a log event. Must not own: when to ask
 * (tools and the pre-execute policy decide that).
 */
export default class Approval extends Service {
  static inject = ['sessions']
  static Config: Schema<Config> = Schema.object({
    policy: Schema.union(APPROVAL_POLICIES)
      .default('ask')
      .description('Policy for sessions that have not chosen one (`never` rejects every request).'),
    timeoutMs: Schema.natural()
      .default(300_000)
      .description('An unanswered request is rejected after this long (0: wait until the turn is cancelled).'),
  })

  private readonly answerers: { ctx: Context; answer: Answerer; actor?: AuthorityActor }[] = []
  private readonly grantStores: GrantStore[] = []
  private readonly routers: ApprovalRouter[] = []

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'approval')
    contributeApprovalsSection(ctx)
    ctx.sessions.defineKind(ctx, 'approval/asked', {
      schema: ApprovalAskedData,
      validate: (data) => (data.rule === undefined ? undefined : ruleProblem(data.rule, 'approval/asked rule')),
    })
    ctx.sessions.defineKind(ctx, 'approval/decided', { schema: ApprovalDecidedData })
    ctx.sessions.defineKind(ctx, 'approval/policy', {
      schema: ApprovalPolicyData,
      validateStored: (data) => checkShape(StoredApprovalPolicyData, data, 'data'),
    })
  }

  /**
   * Registers someone who can answer, for as long as `ctx` lives. The most recent answerer is asked. `actor`
   * names who answers through it (a grant answer is recorded under that actor).
   */
  answerer(ctx: Context, answer: Answerer, options: AnswererOptions = {}): void {
    if (options.actor !== undefined) assertActor(options.actor, 'approval.answerer')
    ctx.effect(() => {
      const entry = { ctx, answer, ...(options.actor ? { actor: options.actor } : {}) }
      this.answerers.push(entry)
      return () => this.answerers.splice(this.answerers.indexOf(entry), 1)
    }, 'approval answerer')
  }

  /** Registers where grants are checked and stored, for as long as `ctx` lives (the most recent wins). */
  useGrantStore(ctx: Context, store: GrantStore): void {
    ctx.effect(() => {
      this.grantStores.push(store)
      return () => void this.grantStores.splice(this.grantStores.indexOf(store), 1)
    }, 'approval grant store')
  }

  /** Registers a router, for as long as `ctx` lives (every router is consulted, most recent first). */
  useRouter(ctx: Context, router: ApprovalRouter): void {
    ctx.effect(() => {
      this.routers.push(router)
      return () => void this.routers.splice(this.routers.indexOf(router), 1)
    }, 'approval router')
  }

  /** The request as the answerer sees it after every router, or a refusal note. */
  private route(request: ApprovalRequest): ApprovalRequest | string {
    let routed = request
    for (let i = this.routers.length - 1; i >= 0; i--) {
      const next = this.routers[i]!(routed)
      if (typeof next === 'string') return next
      if (next) routed = next
    }
    return routed
  }

  /**
   * Checks an edited rule for a request before it is answered (the web card shows the error): the normalized
   * rule, or an Error saying why it cannot be kept. Without a grant store nothing can be kept.
   */
  checkRule(session: Session, request: ApprovalRequest, rule: string): string {
    const store = this.grantStores.at(-1)
    if (!store) throw new Error('no grant store is mounted, so no rule can be kept')
    return store.checkRule(session, request, rule)
  }

  /** Whether an answer to this request may store a grant (it has a rule and a store is mounted). */
  canGrant(request: Pick<ApprovalRequest, 'rule'>): boolean {
    return !!request.rule && this.grantStores.length > 0
  }

  get canAsk(): boolean {
    return this.answerers.length > 0
  }

  /** The policy in force for a session: its last `approval/policy` event, else the configured default. */
  policy(session: Session): ApprovalPolicy {
    return session.last('approval/policy')?.data.policy ?? this.config.policy
  }

  /** Sets the policy from the next request on, as a logged fact naming `actor` (required: nobody may forget to say who). */
  setPolicy(session: Session, policy: ApprovalPolicy, actor: AuthorityActor): void {
    if (!APPROVAL_POLICIES.includes(policy))
      throw new TypeError(`unknown approval policy "${policy}" (known: ${APPROVAL_POLICIES.join(', ')})`)
    assertActor(actor, 'approval.setPolicy')
    if (this.policy(session) !== policy || !session.last('approval/policy'))
      session.append('approval/policy', { policy, actor })
  }

  /** Asks for approval. Never throws and never allows by accident: every anomaly is a logged rejection. */
  async request(
    session: Session,
    input: Omit<ApprovalRequest, 'requestId' | 'sessionId'>,
    signal: AbortSignal,
  ): Promise<ApprovalDecision> {
    const request: ApprovalRequest = { requestId: randomUUID(), sessionId: session.id, ...input }
    const { sessionId: _omit, arguments: _logged, ...asked } = request
    session.append('approval/asked', asked)
    const decision = await this.decide(session, request, signal)
    const stored = await this.storeGrant(session, request, decision)
    session.append('approval/decided', {
      requestId: request.requestId,
      answer: stored.answer,
      by: stored.by,
      ...(stored.note ? { note: stored.note } : {}),
      ...(stored.actor ? { actor: stored.actor } : {}),
      ...(stored.message ? { message: stored.message } : {}),
      ...(stored.arguments ? { edited: true as const } : {}),
      ...(stored.rule ? { rule: stored.rule } : {}),
    })
    await session.flush()
    return stored
  }

  /**
   * Stores the grant a grant answer asks for, before the decision is logged (so the grant event precedes it).
   * Whatever cannot be stored becomes an `allow_once`, with a note saying why: the person allowed this call.
   */
  private async storeGrant(
    session: Session,
    request: ApprovalRequest,
    decision: ApprovalDecision,
  ): Promise<ApprovalDecision> {
    if (decision.answer !== 'allow_session' && decision.answer !== 'allow_always') return decision
    const once = (note: string): ApprovalDecision => ({ ...decision, answer: 'allow_once', note })
    const store = this.grantStores.at(-1)
    if (!request.rule) return once(`${decision.answer} asked, but the request offered no rule: allowed once`)
    if (!store) return once(`${decision.answer} asked, but no grant store is mounted: allowed once`)
    if (!decision.actor) return once(`${decision.answer} asked by an answerer that names no actor: allowed once`)
    let rule = request.rule
    if (decision.rule !== undefined && decision.rule !== request.rule) {
      // Fail closed: an edited rule that does not cover this call is not kept, and the call is not allowed.
      try {
        rule = store.checkRule(session, request, decision.rule)
      } catch (error) {
        return {
          answer: 'reject',
          by: 'error',
          note: `the edited rule was refused: ${error instanceof Error ? error.message : error}`,
        }
      }
    }
    try {
      await store.store(session, {
        rule,
        scope: decision.answer === 'allow_session' ? 'session' : 'workspace',
        actor: decision.actor,
        requestId: request.requestId,
      })
      const { rule: _asked, ...kept } = decision
      return rule === request.rule ? kept : { ...kept, rule }
    } catch (error) {
      return once(
        `the grant ${rule} could not be stored (${error instanceof Error ? error.message : error}): allowed once`,
      )
    }
  }

  private async decide(session: Session, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    if (this.policy(session) === 'never')
      return { answer: 'reject', by: 'policy', note: 'the approval policy is "never"' }
    const held = await this.checkGrants(session, request)
    if (held) return held
    const routed = this.route(request)
    if (typeof routed === 'string') return { answer: 'reject', by: 'policy', note: routed }
    const answerer = this.answerers.at(-1)
    if (!answerer) return { answer: 'reject', by: 'no-answerer', note: 'nobody can answer approvals in this session' }
    if (signal.aborted) return { answer: 'reject', by: 'cancelled' }
    const local = new AbortController()
    const onAbort = () => local.abort()
    signal.addEventListener('abort', onAbort, { once: true })
    let timer: NodeJS.Timeout | undefined
    try {
      const outcome = await new Promise<ApprovalDecision>((resolve) => {
        if (this.config.timeoutMs > 0)
          timer = setTimeout(
            () => resolve({ answer: 'reject', by: 'timeout', note: `no answer within ${this.config.timeoutMs} ms` }),
            this.config.timeoutMs,
          )
        local.signal.addEventListener('abort', () => resolve({ answer: 'reject', by: 'cancelled' }), { once: true })
        answerer.answer(routed, local.signal).then(
          (reply) => resolve(decisionOf(reply, answerer.actor)),
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

  /** A request already answered by a standing grant or a deny rule (a failing check asks, it never allows). */
  private async checkGrants(session: Session, request: ApprovalRequest): Promise<ApprovalDecision | undefined> {
    const store = this.grantStores.at(-1)
    if (!store || !request.rule) return undefined
    try {
      const held = await store.check(session, request)
      if (held === 'allow')
        return { answer: 'allow_once', by: 'grant', note: `a standing grant covers ${request.rule}` }
      if (held === 'deny') return { answer: 'reject', by: 'grant', note: `a deny rule covers ${request.rule}` }
    } catch (error) {
      this.ctx
        .logger('approval')
        .warn('grant check failed, asking instead: %s', error instanceof Error ? error.message : error)
    }
    return undefined
  }
}

/** An answerer's reply as a decision; anything malformed is a rejection, never an allow. */
function decisionOf(reply: ApprovalAnswer | ApprovalReply, actor: AuthorityActor | undefined): ApprovalDecision {
  const by = { by: 'user' as const, ...(actor ? { actor } : {}) }
  const {
    answer,
    message,
    arguments: edited,
    rule,
  } = typeof reply === 'string'
    ? { answer: reply, message: undefined, arguments: undefined, rule: undefined }
    : (reply ?? ({} as ApprovalReply))
  if (!APPROVAL_ANSWERS.includes(answer) || answer === 'reject')
    return { answer: 'reject', ...by, ...(typeof message === 'string' && message ? { message } : {}) }
  if (rule !== undefined) {
    if (typeof rule !== 'string') return { answer: 'reject', by: 'error', note: 'the edited rule is not a string' }
    if (answer === 'allow_once')
      return {
        answer: 'reject',
        by: 'error',
        note: 'an edited rule comes with allow_session or allow_always, not allow_once',
      }
    if (edited !== undefined)
      return { answer: 'reject', by: 'error', note: 'a grant answer cannot also edit the arguments' }
    return { answer, ...by, rule }
  }
  if (edited === undefined) return { answer, ...by }
  if (typeof edited !== 'object' || edited === null || Array.isArray(edited))
    return { answer: 'reject', by: 'error', note: 'the edited arguments are not a JSON object' }
  // A standing grant would cover calls the edit never showed: edited arguments allow this call only.
  if (answer !== 'allow_once')
    return {
      answer: 'reject',
      by: 'error',
      note: `edited arguments may only be allowed once (the answer was ${answer})`,
    }
  return { answer, ...by, arguments: edited }
}
