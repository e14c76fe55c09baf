// Subagents whose turns run in an ACP agent process (docs/architecture.md, "Subagents").
import { randomUUID } from 'node:crypto'
import type {
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionUpdate,
} from '@agentclientprotocol/sdk'
import type { Agent, TurnResult } from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import type { Context } from '@dsh/cordis'
import type { Route, TextBlock } from '@dsh/llm'
import type { SandboxMode } from '@dsh/sandbox'
import Schema from '@dsh/schemastery'
import { Type, type ErrorData, type Static, type TurnEndReason } from '@dsh/session'
import type {} from '@dsh/subprocess'
import type { SubagentKind } from '@dsh/subagent'
import { ChildAgents, ChildConfig } from '@dsh/subagent-kit'
import { startRemote, type RemoteAgent } from './remote.ts'

/**
 * In an ACP child: one `session/update` its agent process sent, as received. Its type is the ACP SDK's; the
 * log checks only what tells the variants apart (issue #28.6).
 */
const AcpUpdateData = Type.Object({ update: Type.Unsafe<SessionUpdate>(Type.Object({ sessionUpdate: Type.String() })) })

declare module '@dsh/session' {
  interface SessionEventMap {
    'subagent/acp-update': Static<typeof AcpUpdateData>
  }
}

export interface Config extends ChildConfig {
  command: string[]
  env: Record<string, string>
  startTimeoutMs: number
  killGraceMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.intersect([
  ChildConfig,
  Schema.object({
    command: Schema.array(Schema.string())
      .default(['dsh', '--profile', 'acp'])
      .description("The ACP agent to run each child in (argv; started in the parent's working directory)."),
    env: Schema.dict(Schema.string())
      .default({})
      .description(
        "Variables added to the agent's scrubbed environment (DSH_HOME is this dsh's home unless set here; secret-looking names are dropped).",
      ),
    startTimeoutMs: Schema.natural()
      .default(30_000)
      .description('How long the agent may take to initialize and open its session.'),
    killGraceMs: Schema.natural()
      .default(5_000)
      .description('After its stdin closes, how long the agent may take to exit before SIGKILL.'),
  }),
]) as Schema<Partial<Config>, Config>

const STOP_REASONS: Record<string, TurnEndReason> = {
  end_turn: 'completed',
  cancelled: 'aborted',
  max_tokens: 'max-tokens',
  max_turn_requests: 'max-steps',
  refusal: 'blocked',
}

/**
 * A child is a session of this process whose turns run in an ACP agent (docs/architecture.md, "Agents and the turn"): the agent's session is
 * put in the mode named by the child's ceiling, every `session/update` is logged in the child as
 * `subagent/acp-update`, and each permission it asks for is an approval of the child (refused below
 * `danger-full-access` by the kit's router: the agent asks only for more than its mode allows).
 */
export default class SubagentAcp extends ChildAgents {
  static Config = Config
  readonly kind: SubagentKind = 'acp'
  private readonly remotes = new Map<string, RemoteAgent>()

  constructor(
    ctx: Context,
    private readonly options: Config,
  ) {
    super(ctx, options)
    ctx.sessions.defineKind(ctx, 'subagent/acp-update', { ignorable: true, schema: AcpUpdateData })
  }

  protected async open(
    parent: Agent,
    _request: unknown,
    _type: unknown,
    route: Route,
    ceiling: SandboxMode,
  ): Promise<Agent> {
    const child = await this.ctx.agents.create({ cwd: parent.cwd, parent, route })
    const environment = this.ctx
      .get('subprocess')
      ?.environment({ DSH_HOME: this.ctx.app.home, ...this.options.env }).env
    try {
      const remote = await startRemote({
        command: this.options.command,
        cwd: parent.cwd,
        env: environment ?? { PATH: process.env.PATH ?? '', DSH_HOME: this.ctx.app.home },
        mode: ceiling,
        startTimeoutMs: this.options.startTimeoutMs,
        killGraceMs: this.options.killGraceMs,
        permission: (request) => this.permission(child, request),
      })
      this.remotes.set(child.id, remote)
      child.scope.effect(() => () => (this.remotes.delete(child.id), remote.close()), 'ACP subagent process')
    } catch (error) {
      await child.dispose()
      throw error
    }
    return child
  }

  protected override async runTurn(
    child: Agent,
    content: TextBlock[],
    signal: AbortSignal,
  ): Promise<TurnResult | undefined> {
    const remote = this.remotes.get(child.id)
    if (!remote) throw new Error(`the ACP agent of subagent ${child.session.id} is gone`)
    const turnId = randomUUID()
    child.session.append('turn/start', { turnId })
    child.session.append('user/message', { content, source: 'user' })
    let text = ''
    remote.onUpdate = (update) => {
      child.session.append('subagent/acp-update', { update: JSON.parse(JSON.stringify(update)) })
      if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') text += update.content.text
    }
    const cancel = () =>
      void remote.agent.notify('session/cancel', { sessionId: remote.sessionId }).catch(() => undefined)
    signal.addEventListener('abort', cancel, { once: true })
    let reason: TurnEndReason = 'error'
    let error: ErrorData | undefined
    try {
      if (signal.aborted) cancel()
      const response = (await remote.agent.request('session/prompt', {
        sessionId: remote.sessionId,
        prompt: content.map((block) => ({ type: 'text' as const, text: block.text })),
      })) as PromptResponse
      reason = STOP_REASONS[response.stopReason] ?? 'error'
      if (reason === 'error' || reason === 'blocked')
        error = { code: 'SUBAGENT_FAILED', message: `the ACP agent stopped: ${response.stopReason}` }
    } catch (failure) {
      error = {
        code: 'SUBAGENT_FAILED',
        message: `the ACP agent failed: ${failure instanceof Error ? failure.message : failure}${remote.stderr() ? `; its stderr: ${remote.stderr().trim().slice(-300)}` : ''}`,
      }
    } finally {
      signal.removeEventListener('abort', cancel)
      remote.onUpdate = undefined
    }
    child.session.append('turn/end', { turnId, reason, ...(error ? { error } : {}) })
    await child.session.flush()
    return { turnId, reason, text, ...(error ? { error } : {}) }
  }

  /** The agent asks for more than its mode: asked as the child's approval (the kit routes or refuses it). */
  private async permission(child: Agent, request: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const title = request.toolCall.title ?? request.toolCall.toolCallId
    const approval = this.ctx.get('approval')
    const decision = approval
      ? await approval.request(
          child.session,
          {
            agentId: child.id,
            tool: 'acp',
            summary: `ACP agent: ${title}`,
            reason: 'the ACP agent asks for permission',
          },
          new AbortController().signal,
        )
      : { answer: 'reject' as const }
    const wanted = decision.answer === 'reject' ? ['reject_once', 'reject_always'] : ['allow_once']
    const option = request.options.find((candidate) => wanted.includes(candidate.kind))
    return option
      ? { outcome: { outcome: 'selected', optionId: option.optionId } }
      : { outcome: { outcome: 'cancelled' } }
  }
}
