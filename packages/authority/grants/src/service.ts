import { randomUUID } from 'node:crypto'
import { join, resolve } from 'node:path'
import type { ApprovalRequest, GrantRequest } from '@dsh/approval'
import type {} from '@dsh/app'
import {
  assertActor,
  checkEditedRule,
  evaluateRules,
  parseRule,
  RuleError,
  suggestRule,
  type AuthorityActor,
  type Rule,
  type RuleSet,
  type RuleSubject,
} from '@dsh/authority-rules'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/settings'
import type { Decision, ToolInvocation } from '@dsh/tools'
import { GrantData, GrantIgnoredData, GrantRevokedData, grantRuleProblem, type Grant } from './events.ts'
import { entryProblem, readGrantsFile, writeGrantsFile, type WorkspaceGrant } from './file.ts'
import { ensureGrantKey, grantTag, readGrantKey, tagProblem } from './integrity.ts'
import { realPath, subjectOf } from './subject.ts'

declare module '@dsh/settings' {
  interface Settings {
    'permissions.allow': string[]
    'permissions.ask': string[]
    'permissions.deny': string[]
  }
}

declare module '@dsh/cordis' {
  interface Context {
    grants: Grants
  }
}

export interface Config {
  file: string
  keyFile: string
}

const EFFECT_SETTINGS = { deny: 'permissions.deny', ask: 'permissions.ask', allow: 'permissions.allow' } as const

/** A grant id, a rule that is not valid, or a revocation naming nothing. */
export class GrantError extends Error {
  override name = 'GrantError'
  constructor(
    readonly code: 'GRANT_NOT_FOUND' | 'INVALID_GRANT',
    message: string,
  ) {
    super(message)
  }
}

/** A grants.yaml entry dsh did not write (no valid integrity tag): never applied, shown and logged with why. */
export interface IgnoredGrant {
  grant: WorkspaceGrant
  reason: string
}

/** What `list` shows: the grants in force for a session or a workspace, the ignored entries, and the settings' rules. */
export interface GrantListing {
  workspace: string
  session: Grant[]
  always: WorkspaceGrant[]
  ignored: IgnoredGrant[]
  settings: { allow: string[]; ask: string[]; deny: string[] }
}

const newId = () => `g-${randomUUID().slice(0, 8)}`

/**
 * Standing grants and rules (docs/architecture.md, "Authority"). Owns: the `grant/added` and
 * `grant/revoked` kinds, `$DSH_HOME/grants.yaml` (workspace grants), the `permissions.allow|ask|deny`
 * settings, and their application in `tools/pre-execute` (deny > ask > allow) and to approval requests that
 * carry a rule. Must not own: asking (ctx.approval), what a tool may do once allowed (the sandbox still
 * confines it: a grant only skips a question), or changing the mode, preset or policy.
 */
export class Grants extends Service {
  static inject = ['sessions', 'approval', 'settings', 'app']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    file: Schema.string()
      .default('grants.yaml')
      .description('The workspace grants file, relative to $DSH_HOME (or absolute).'),
    keyFile: Schema.string()
      .default('grants.key')
      .description(
        "The secret keying each grant's integrity tag, made on first use (0600), relative to $DSH_HOME (or absolute). It must stay unreadable to confined commands: $DSH_HOME/grants.key is a built-in secret path; elsewhere, add it to sandbox.denyRead.",
      ),
  })

  readonly file: string
  readonly keyFile: string
  /** Read-modify-write of grants.yaml, one at a time in this process (two tabs answering "always" at once). */
  private fileTurn: Promise<unknown> = Promise.resolve()

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx, 'grants')
    this.file = join(ctx.app.home, config.file)
    this.keyFile = join(ctx.app.home, config.keyFile)
    ctx.sessions.defineKind(ctx, 'grant/added', { schema: GrantData, validate: grantRuleProblem })
    ctx.sessions.defineKind(ctx, 'grant/revoked', { schema: GrantRevokedData, validate: grantRuleProblem })
    ctx.sessions.defineKind(ctx, 'grant/ignored', { schema: GrantIgnoredData })
    const rules = Schema.array(Schema.string()).default([])
    ctx.settings.define(EFFECT_SETTINGS.allow, rules, {
      description:
        'Rules allowed without asking, e.g. bash(npm test *), write(docs/**); a compound command needs every part allowed.',
    })
    ctx.settings.define(EFFECT_SETTINGS.ask, rules, {
      description: 'Rules that always ask, even when allowed or granted (an answer to them allows once only).',
    })
    ctx.settings.define(EFFECT_SETTINGS.deny, rules, {
      description: 'Rules refused outright, even for calls that would otherwise run (deny > ask > allow).',
    })
    ctx.approval.useGrantStore(ctx, {
      check: (session, request) => this.checkRequest(session, request),
      store: async (session, grant) => void (await this.add(session, grant)),
      checkRule: (session, request, rule) => checkEditedRule(rule, this.requestSubject(session, request)).text,
    })
    ctx.on('tools/pre-execute', (invocation, next) => this.preExecute(invocation, next))
  }

  /** The settings' rules of one effect, parsed; a malformed one throws naming the setting and index. */
  settingRules(effect: keyof typeof EFFECT_SETTINGS): Rule[] {
    const key = EFFECT_SETTINGS[effect]
    return this.ctx.settings.get(key).map((text, index) => parseRule(text, `setting ${key}[${index}]`))
  }

  /** Session grants in force: `grant/added { scope: session }` not followed by a `grant/revoked` of the same id. */
  sessionGrants(session: Session): Grant[] {
    const revoked = new Set(session.all('grant/revoked').map((event) => event.data.id))
    return session
      .all('grant/added')
      .map((event) => event.data)
      .filter((grant) => grant.scope === 'session' && !revoked.has(grant.id))
  }

  /** The "always" grants of a workspace (its real path) that dsh wrote, from grants.yaml; the others are ignored. */
  async workspaceGrants(cwd: string): Promise<WorkspaceGrant[]> {
    return (await this.standing(cwd)).valid
  }

  /** A workspace's grants.yaml entries, split into those whose integrity tag is dsh's and those ignored (with why). */
  async standing(cwd: string): Promise<{ valid: WorkspaceGrant[]; ignored: IgnoredGrant[] }> {
    const workspace = realPath(cwd)
    const entries = (await readGrantsFile(this.file)).workspaces[workspace] ?? []
    const key = entries.length ? await readGrantKey(this.keyFile) : undefined
    const valid: WorkspaceGrant[] = []
    const ignored: IgnoredGrant[] = []
    for (const [index, grant] of entries.entries()) {
      const malformed = entryProblem(grant)
      const reason = malformed
        ? `it is malformed (workspaces["${workspace}"][${index}]: ${malformed}): not written by this dsh: remove it (dsh grants revoke <id>) or fix it`
        : tagProblem(key, this.keyFile, workspace, grant)
      if (reason) ignored.push({ grant, reason })
      else valid.push(grant)
    }
    return { valid, ignored }
  }

  /**
   * Every rule in force for a session: settings, then its session grants and its workspace's grants as allow
   * rules. An entry of grants.yaml without dsh's tag is left out and logged once in the session (`grant/ignored`).
   */
  async rules(session: Session): Promise<RuleSet> {
    const { valid, ignored } = await this.standing(session.cwd)
    this.logIgnored(session, ignored)
    const granted = [...this.sessionGrants(session), ...valid].map((grant) =>
      parseRule(grant.rule, `grant ${grant.id}`),
    )
    return {
      deny: this.settingRules('deny'),
      ask: this.settingRules('ask'),
      allow: [...this.settingRules('allow'), ...granted],
    }
  }

  async list(cwd: string, session?: Session): Promise<GrantListing> {
    const { valid, ignored } = await this.standing(cwd)
    return {
      workspace: realPath(cwd),
      session: session ? this.sessionGrants(session) : [],
      always: valid,
      ignored,
      settings: {
        allow: this.ctx.settings.get('permissions.allow'),
        ask: this.ctx.settings.get('permissions.ask'),
        deny: this.ctx.settings.get('permissions.deny'),
      },
    }
  }

  /** Each ignored entry once per session, for the audit (`dsh sessions show --audit`) and a warning. */
  private logIgnored(session: Session, ignored: IgnoredGrant[]): void {
    if (!ignored.length || session.closed) return
    const logged = new Set(
      session.all('grant/ignored').map((event) => `${event.data.id}\0${event.data.rule}\0${event.data.reason}`),
    )
    for (const { grant, reason } of ignored) {
      if (logged.has(`${String(grant?.id)}\0${String(grant?.rule)}\0${reason}`)) continue
      session.append('grant/ignored', {
        id: String(grant?.id),
        rule: String(grant?.rule),
        claimedActor: String(grant?.actor),
        reason,
      })
      this.ctx
        .logger('grants')
        .warn('%s: grant %s (%s) ignored: %s', this.file, String(grant?.id), String(grant?.rule), reason)
    }
  }

  /**
   * Adds a grant on behalf of `actor` (required). A workspace grant is written to grants.yaml first, then
   * logged in the session that made it; a session grant is only logged.
   */
  async add(session: Session, grant: Omit<GrantRequest, 'requestId'> & { requestId?: string }): Promise<Grant> {
    assertActor(grant.actor, 'grants.add')
    const rule = parseRule(grant.rule, 'grants.add').text
    if (grant.scope !== 'session' && grant.scope !== 'workspace')
      throw new GrantError(
        'INVALID_GRANT',
        `grants.add: scope must be session or workspace (got ${JSON.stringify(grant.scope)})`,
      )
    const added: Grant = {
      id: newId(),
      rule,
      scope: grant.scope,
      actor: grant.actor,
      ...(grant.requestId ? { requestId: grant.requestId } : {}),
    }
    if (grant.scope === 'workspace') {
      await this.exclusive(async () => {
        const key = await ensureGrantKey(this.keyFile)
        const content = await readGrantsFile(this.file)
        const workspace = realPath(session.cwd)
        const entry: WorkspaceGrant = {
          id: added.id,
          rule,
          actor: grant.actor,
          added: new Date().toISOString(),
          session: session.id,
        }
        entry.tag = grantTag(key, workspace, entry)
        content.workspaces[workspace] = [...(content.workspaces[workspace] ?? []), entry]
        await writeGrantsFile(this.file, content)
      })
    }
    session.append('grant/added', added)
    return added
  }

  /**
   * Revokes grants by id or by rule text, on behalf of `actor`: from grants.yaml for the workspace `cwd`, and,
   * given a live session, its session grants (each revocation logged in it, as are workspace grants it made).
   * Throws GRANT_NOT_FOUND when nothing matches.
   */
  async revoke(
    target: string,
    options: { cwd: string; actor: AuthorityActor; session?: Session },
  ): Promise<(Grant | WorkspaceGrant)[]> {
    assertActor(options.actor, 'grants.revoke')
    const matches = (grant: { id: string; rule: string } | null) =>
      grant?.id === target || grant?.rule === target.trim()
    const workspace = realPath(options.cwd)
    const removed: (Grant | WorkspaceGrant)[] = await this.exclusive(async () => {
      const content = await readGrantsFile(this.file)
      const held = content.workspaces[workspace] ?? []
      const revokedHere = held.filter(matches)
      if (revokedHere.length) {
        content.workspaces[workspace] = held.filter((grant) => !matches(grant))
        await writeGrantsFile(this.file, content)
      }
      return revokedHere
    })
    const session = options.session
    if (session) {
      for (const grant of this.sessionGrants(session).filter(matches)) removed.push(grant)
      const logged = new Set(session.all('grant/added').map((event) => event.data.id))
      for (const grant of removed) {
        if (logged.has(grant.id))
          session.append('grant/revoked', {
            id: grant.id,
            rule: grant.rule,
            scope: 'scope' in grant ? grant.scope : 'workspace',
            actor: options.actor,
          })
      }
    }
    if (!removed.length)
      throw new GrantError(
        'GRANT_NOT_FOUND',
        `no grant "${target}" in ${workspace}${session ? ' or in this session' : ''} (see dsh grants list)`,
      )
    return removed
  }

  private exclusive<T>(change: () => Promise<T>): Promise<T> {
    const next = this.fileTurn.then(change, change)
    this.fileTurn = next.catch(() => undefined)
    return next
  }

  /** Rules applied to one tool call: deny before anything runs, ask over allow, allow only for what would ask. */
  private async preExecute(invocation: ToolInvocation, next: () => Promise<Decision>): Promise<Decision> {
    const subject = subjectOf(invocation)
    if (!subject) return next()
    const session = invocation.context.session
    const denied = evaluateRules({ deny: this.settingRules('deny'), ask: [], allow: [] }, subject)
    if (denied) return { action: 'deny', reason: `the rule ${denied.rule.text} in ${EFFECT_SETTINGS.deny} refuses it` }
    const decision = await next()
    if (decision.action === 'deny') return decision
    const asked = evaluateRules({ deny: [], ask: this.settingRules('ask'), allow: [] }, subject)
    // An ask rule wins over every allow: its question is answered once at a time (no rule is offered).
    if (asked)
      return {
        action: 'ask',
        reason:
          decision.action === 'ask'
            ? `${decision.reason} (the rule ${asked.rule.text} in ${EFFECT_SETTINGS.ask} asks every time)`
            : `the rule ${asked.rule.text} in ${EFFECT_SETTINGS.ask} asks first`,
      }
    if (decision.action === 'allow') return decision
    const verdict = evaluateRules(await this.rules(session), subject)
    if (verdict?.effect === 'allow') return { action: 'allow' }
    const rule = decision.rule ?? suggestRule(subject)
    return rule ? { ...decision, rule } : decision
  }

  /** What an exact rule (`network(api.example.org)`, a direct request's) names, as a subject. */
  private exactSubject(session: Session, rule: Rule): RuleSubject {
    const isPath = rule.kind === 'write' || rule.kind === 'edit'
    return {
      kind: rule.kind,
      value: isPath ? realPath(resolve(session.cwd, rule.pattern)) : rule.pattern,
      cwd: realPath(session.cwd),
    }
  }

  /**
   * What an approval request is about, for checking an edited rule: a tool call's subject (from the tool and
   * the arguments it was asked with), else what the request's own exact rule names. Throws when neither is known.
   */
  private requestSubject(session: Session, request: ApprovalRequest): RuleSubject {
    const call = request.arguments
      ? subjectOf({
          name: request.tool,
          arguments: request.arguments,
          context: { cwd: session.cwd },
        } as unknown as ToolInvocation)
      : undefined
    if (call) return call
    if (!request.rule) throw new RuleError(`approval ${request.requestId} offers no rule, so none can be kept`)
    const offered = parseRule(request.rule, `approval request ${request.requestId} rule`)
    if (offered.pattern.includes('*'))
      throw new RuleError(
        `approval ${request.requestId} is not about one call, so its rule ${offered.text} cannot be edited`,
      )
    return this.exactSubject(session, offered)
  }

  /** A direct approval request with an exact rule (`network(api.example.org)`): answered by rules already held. */
  private async checkRequest(session: Session, request: ApprovalRequest): Promise<'allow' | 'deny' | undefined> {
    if (!request.rule) return undefined
    const rule = parseRule(request.rule, `approval request ${request.requestId} rule`)
    if (rule.pattern.includes('*')) return undefined
    const subject = this.exactSubject(session, rule)
    const verdict = evaluateRules(await this.rules(session), subject)
    return verdict?.effect === 'ask' ? undefined : verdict?.effect
  }
}
