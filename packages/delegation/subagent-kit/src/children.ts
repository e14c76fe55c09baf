import type { Agent, TurnResult } from '@dsh/agent'
import type { ApprovalRequest } from '@dsh/approval'
import type { Context } from '@dsh/cordis'
import type { Route, TextBlock } from '@dsh/llm'
import { SANDBOX_MODES, type SandboxMode } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/settings'
import {
  SubagentEndData,
  SubagentError,
  SubagentParentData,
  SubagentStartData,
  Subagents,
  type AgentType,
  type SubagentKind,
  type SubagentRequest,
  type SubagentResult,
} from '@dsh/subagent'
import type {} from '@dsh/tools'
import { loadAgentTypes } from './agent-types.ts'
import { ceilingRefusal } from './guard.ts'
import { Slots } from './slots.ts'

declare module '@dsh/settings' {
  interface Settings {
    'subagent.maxConcurrent': number
  }
}

export interface ChildConfig {
  ceiling: SandboxMode
  maxDepth: number
  maxConcurrent: number
  agentFolders: string[]
  writeTools: string[]
}

export const ChildConfig: Schema<Partial<ChildConfig>, ChildConfig> = Schema.object({
  ceiling: Schema.union(SANDBOX_MODES)
    .default('workspace-write')
    .description(
      "The most authority any child runs under, whatever its parent's mode (a child runs at the lower of the two).",
    ),
  maxDepth: Schema.natural()
    .min(1)
    .default(1)
    .description('How deep children may nest (1: a child cannot start children of its own).'),
  maxConcurrent: Schema.natural()
    .min(1)
    .default(4)
    .description(
      'Default of the `subagent.maxConcurrent` setting: children running at once in this process (the rest wait).',
    ),
  agentFolders: Schema.array(Schema.string())
    .default(['.claude/agents', '.dsh/agents'])
    .description(
      'Workspace folders of agent type files (`*.md` with front matter), later folders winning over earlier ones.',
    ),
  writeTools: Schema.array(Schema.string())
    .default(['write', 'edit', 'str_replace_editor'])
    .description(
      "Tools whose `path` argument is written: a child's write outside its fence is refused, never asked about.",
    ),
})

const lower = (a: SandboxMode, b: SandboxMode): SandboxMode =>
  SANDBOX_MODES.indexOf(a) <= SANDBOX_MODES.indexOf(b) ? a : b
const text = (value: string): TextBlock => ({ type: 'text', text: value })

/**
 * The child lifecycle every subagent provider shares (docs/architecture.md, "Subagents"). A provider says
 * only how a child's agent is made (`open`); this class links the logs both ways, caps the child at its
 * ceiling before its first turn, routes its approvals to its parent's answerer, bounds how many run at once,
 * cancels it with its parent, and turns every end into a typed result.
 */
export abstract class ChildAgents extends Subagents {
  static inject = ['agents', 'sessions', 'sandboxPolicy', 'settings', 'tools', 'fs']
  abstract readonly kind: SubagentKind
  private readonly slots: Slots

  constructor(
    ctx: Context,
    protected readonly config: ChildConfig,
  ) {
    super(ctx)
    ctx.sessions.defineKind(ctx, 'subagent/start', { schema: SubagentStartData })
    ctx.sessions.defineKind(ctx, 'subagent/end', { schema: SubagentEndData })
    ctx.sessions.defineKind(ctx, 'subagent/parent', { schema: SubagentParentData })
    ctx.settings.define('subagent.maxConcurrent', Schema.natural().min(1).default(config.maxConcurrent), {
      description: 'Subagents that may run at the same time in this process; the rest wait.',
    })
    this.slots = new Slots(() => ctx.settings.get('subagent.maxConcurrent'))
    // Agent type files are instructions the next session obeys: never the model's to write (docs/security.md).
    ctx.sandboxPolicy.protectLoaded(ctx, config.agentFolders, `the ${this.constructor.name} row's agentFolders`)
    // The ceiling phase, first whatever the order of the rows (docs/architecture.md, "Tools"): no hook runs for
    // a call the ceiling refuses, and no approval, grant or allow rule may answer what it refuses. A hook
    // rewrites the arguments in a later phase, so they are checked again once the later phases have decided.
    ctx.on('tools/pre-execute/ceiling', async (invocation, next) => {
      const before = await ceilingRefusal(ctx, config, invocation)
      if (before) return { action: 'deny', reason: before }
      const seen = invocation.arguments
      const decision = await next()
      const after =
        decision.action !== 'deny' && invocation.arguments !== seen
          ? await ceilingRefusal(ctx, config, invocation)
          : undefined
      return after ? { action: 'deny', reason: after } : decision
    })
    ctx.on('agent/request', async (draft, next) => {
      const allowed = draft.agent.session.last('subagent/parent')?.data.tools
      if (allowed) draft.request.tools = draft.request.tools?.filter((tool) => allowed.includes(tool.name))
      return next()
    })
    ctx.get('approval')?.useRouter(ctx, (request) => this.routeApproval(request))
  }

  /**
   * Makes the child's agent (a child of `parent`, on a session of its own), before it is linked and capped at
   * `ceiling` (which the kit logs right after).
   */
  protected abstract open(
    parent: Agent,
    request: SubagentRequest,
    type: AgentType,
    route: Route,
    ceiling: SandboxMode,
  ): Promise<Agent>

  types(cwd: string): Promise<AgentType[]> {
    return loadAgentTypes(cwd, this.config.agentFolders)
  }

  async run(parent: Agent, request: SubagentRequest, signal: AbortSignal): Promise<SubagentResult> {
    const types = await this.types(parent.cwd)
    const name = request.agentType ?? 'general'
    const type = types.find((candidate) => candidate.name === name)
    if (!type)
      throw new SubagentError(
        'SUBAGENT_NOT_FOUND',
        `there is no agent type "${name}" (known: ${types.map((known) => known.name).join(', ')})`,
      )
    const depth = (parent.session.last('subagent/parent')?.data.depth ?? 0) + 1
    if (depth > this.config.maxDepth)
      throw new SubagentError(
        'SUBAGENT_FAILED',
        `subagents may nest ${this.config.maxDepth} deep: this session is already a subagent`,
      )
    return this.slots.run(signal, async () => {
      const ceiling = [type.ceiling, this.config.ceiling].reduce<SandboxMode>(
        (mode, cap) => (cap ? lower(mode, cap) : mode),
        this.ctx.sandboxPolicy.mode(parent.session),
      )
      const model = request.model ?? type.model
      const route: Route = model ? { provider: parent.route.provider, model } : parent.route
      let child: Agent
      try {
        child = await this.open(parent, request, type, route, ceiling)
      } catch (error) {
        return {
          childSessionId: '',
          status: 'failed',
          text: '',
          error: {
            code: 'SUBAGENT_FAILED',
            message: `the subagent could not start: ${error instanceof Error ? error.message : error}`,
          },
        }
      }
      const link = {
        kind: this.kind,
        agentType: type.name,
        description: request.description,
        ...(request.callId ? { callId: request.callId } : {}),
      }
      child.session.append('subagent/parent', {
        parentSessionId: parent.session.id,
        depth,
        ...link,
        ...(type.tools ? { tools: type.tools } : {}),
      })
      this.ctx.sandboxPolicy.setCeiling(child.session, ceiling, `subagent of session ${parent.session.id}`)
      parent.session.append('subagent/start', { childSessionId: child.session.id, ceiling, ...link })
      const first = type.instructions ? [text(type.instructions), text(request.prompt)] : [text(request.prompt)]
      return this.drive(parent, child, first, signal)
    })
  }

  async continue(parent: Agent, childSessionId: string, message: string, signal: AbortSignal): Promise<SubagentResult> {
    const child = [...parent.children].find((candidate) => candidate.session.id === childSessionId)
    const link = child?.session.last('subagent/parent')?.data
    if (!child || !link)
      throw new SubagentError('SUBAGENT_NOT_FOUND', `session ${childSessionId} is not a live subagent of this session`)
    if (child.running) throw new SubagentError('SUBAGENT_FAILED', `the subagent ${childSessionId} is still running`)
    return this.slots.run(signal, async () => {
      const ceiling = this.ctx.sandboxPolicy.ceiling(child.session) ?? 'read-only'
      parent.session.append('subagent/start', {
        childSessionId,
        kind: link.kind,
        agentType: link.agentType,
        description: link.description,
        ceiling,
        followup: true,
      })
      return this.drive(parent, child, [text(message)], signal)
    })
  }

  /**
   * Runs one turn of the child to its end; `signal` is the parent's (its cancel must stop the turn). This
   * process's agent loop by default; a provider whose child runs elsewhere (an ACP agent) replaces it.
   */
  protected async runTurn(child: Agent, content: TextBlock[], signal: AbortSignal): Promise<TurnResult | undefined> {
    const cancel = () => child.cancel('the parent cancelled')
    signal.addEventListener('abort', cancel, { once: true })
    try {
      if (signal.aborted) cancel()
      child.followup(content)
      return await child.whenIdle()
    } finally {
      signal.removeEventListener('abort', cancel)
    }
  }

  /** Runs one turn of the child to its end, logs the end in the parent, runs the `subagent/stopped` hook. */
  private async drive(parent: Agent, child: Agent, content: TextBlock[], signal: AbortSignal): Promise<SubagentResult> {
    let result: SubagentResult
    try {
      const turn = await this.runTurn(child, content, signal)
      const status = turn?.reason === 'completed' ? 'completed' : turn?.reason === 'aborted' ? 'aborted' : 'failed'
      const error =
        status === 'completed'
          ? undefined
          : (turn?.error ?? {
              code: status === 'aborted' ? 'SUBAGENT_ABORTED' : 'SUBAGENT_FAILED',
              message: `the subagent's turn ended ${turn?.reason ?? 'without a result'}`,
            })
      result = { childSessionId: child.session.id, status, text: turn?.text ?? '', ...(error ? { error } : {}) }
    } catch (error) {
      result = {
        childSessionId: child.session.id,
        status: 'failed',
        text: '',
        error: { code: 'SUBAGENT_FAILED', message: error instanceof Error ? error.message : String(error) },
      }
    }
    await child.session.flush()
    if (!parent.session.closed) parent.session.append('subagent/end', result)
    try {
      await this.ctx.serial('subagent/stopped', parent, result)
    } catch (error) {
      this.ctx
        .logger('subagent')
        .warn('a subagent/stopped listener failed: %s', error instanceof Error ? error.message : error)
    }
    return result
  }

  /**
   * A child's approval request is asked of whoever answers for its top-level ancestor, naming the child;
   * refused when that session is gone. The child's log keeps the request as made.
   */
  private routeApproval(request: ApprovalRequest): ApprovalRequest | string | undefined {
    let session = this.ctx.sessions.get(request.sessionId)
    let link = session?.last('subagent/parent')?.data
    if (!link) return undefined
    const ceiling = this.ctx.sandboxPolicy.ceiling(session!)
    // The ACP agent enforces its own mode: any permission it asks for would be more than its ceiling lets it have.
    if (link.kind === 'acp' && ceiling !== 'danger-full-access')
      return `an ACP subagent runs under the ceiling ${ceiling}: what its agent asks permission for is refused`
    const path: string[] = []
    while (link) {
      path.push(link.description)
      session = this.ctx.sessions.get(link.parentSessionId)
      if (!session)
        return `the subagent's parent session ${link.parentSessionId} is not open, so nobody can answer for it`
      link = session.last('subagent/parent')?.data
    }
    return {
      ...request,
      sessionId: session!.id,
      summary: `subagent "${path.reverse().join(' › ')}": ${request.summary}`,
    }
  }
}
