import { type Context, Service } from '@dsh/cordis'
import type {} from '@dsh/agent'
import type {} from '@dsh/approval'
import { assertActor, AUTHORITY_ACTORS, type AuthorityActor } from '@dsh/authority-rules'
import Schema from '@dsh/schemastery'
import { oneOf, type Session, type Static } from '@dsh/session'
import { defineTool, ToolError, Type, type Decision, type ToolInvocation } from '@dsh/tools'

/** Plan mode switched on or off, and by whom (`requestId`: the approved `exit_plan_mode` that ended it). Its type and its check. */
const PlanModeData = Type.Object({
  active: Type.Boolean(),
  actor: oneOf(AUTHORITY_ACTORS),
  requestId: Type.Optional(Type.String()),
})
export type PlanModeChange = Static<typeof PlanModeData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'plan/mode': PlanModeChange
  }
}

declare module '@dsh/cordis' {
  interface Context {
    planMode: PlanMode
  }
}

export interface Config {
  readingTools: string[]
  editorReadCommands: string[]
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  readingTools: Schema.array(Schema.string())
    .default(['read', 'glob', 'grep', 'lsp', 'job_output', 'job_list', 'todo_write', 'exit_plan_mode'])
    .description(
      'Tools that run in plan mode (they read, or touch only the session itself); every other tool is refused, bash included.',
    ),
  editorReadCommands: Schema.array(Schema.string())
    .default(['view'])
    .description('`str_replace_editor` commands that run in plan mode.'),
})

/**
 * Plan mode (docs/architecture.md, "Todo and plan mode"): while a session is in it, only reading tools run;
 * every other call (writes, edits, bash, job_kill, any tool not listed) is refused in `tools/pre-execute`
 * with a message, so nothing beyond reading happens and the session's authority is never touched. The
 * model leaves it with `exit_plan_mode(plan)`, which asks the user (the surfaces' approval: web card, ACP
 * permission, SDK callback); only an approval by a named actor ends it. Nobody to ask is a refusal.
 */
export default class PlanMode extends Service {
  static inject = ['sessions', 'tools', 'approval', 'agents']
  static Config = Config

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'planMode')
    // Not ignorable: a session in plan mode must not be opened, and run freely, where nothing enforces it.
    ctx.sessions.defineKind(ctx, 'plan/mode', { schema: PlanModeData })
    ctx.on('tools/pre-execute', (invocation, next) => this.preExecute(invocation, next))
    this.registerExitTool()
  }

  /** Whether the session is in plan mode: its last `plan/mode`. */
  active(session: Session): boolean {
    return session.last('plan/mode')?.data.active === true
  }

  /** Puts the session in plan mode (logged with `actor`); its agent is told at its next step. */
  enter(session: Session, actor: AuthorityActor): void {
    assertActor(actor, 'planMode.enter')
    if (this.active(session)) return
    session.append('plan/mode', { active: true, actor })
    this.ctx.agents
      .bySession(session.id)
      ?.inject(
        "[Plan mode: only reading tools run now (read, glob, grep, the editor's view); writes, edits and bash are refused. Investigate, then call exit_plan_mode with your plan: the user approves it before you change anything.]",
      )
  }

  /** Ends plan mode (a person's choice, logged with `actor`). */
  exit(session: Session, actor: AuthorityActor, requestId?: string): void {
    assertActor(actor, 'planMode.exit')
    if (this.active(session)) session.append('plan/mode', { active: false, actor, ...(requestId && { requestId }) })
  }

  private allowed(invocation: ToolInvocation): boolean {
    if (this.config.readingTools.includes(invocation.name)) return true
    const command = (invocation.arguments as { command?: unknown } | undefined)?.command
    return (
      invocation.name === 'str_replace_editor' &&
      typeof command === 'string' &&
      this.config.editorReadCommands.includes(command)
    )
  }

  private async preExecute(invocation: ToolInvocation, next: () => Promise<Decision>): Promise<Decision> {
    if (!this.active(invocation.context.session) || this.allowed(invocation)) return next()
    return {
      action: 'deny',
      reason: `the session is in plan mode: only reading tools run (${this.config.readingTools.join(', ')}, str_replace_editor ${this.config.editorReadCommands.join('/')}); ${invocation.name} is refused until the user approves your plan (exit_plan_mode)`,
    }
  }

  private registerExitTool(): void {
    this.ctx.tools.register(
      this.ctx,
      defineTool({
        name: 'exit_plan_mode',
        description:
          'In plan mode: present your plan to the user and ask to start working on it. Approved, the session leaves plan mode and your tools work again; rejected, you stay in plan mode.',
        parameters: Type.Object(
          {
            plan: Type.String({
              minLength: 1,
              description: 'The plan, in Markdown: what you will change and how you will check it.',
            }),
          },
          { additionalProperties: false },
        ),
        summarize: () => 'exit plan mode and start on the plan',
        execute: async (args, context) => {
          if (!this.active(context.session))
            throw new ToolError('INVALID_ARGS', 'the session is not in plan mode: there is nothing to exit')
          const input = {
            agentId: context.agentId,
            callId: context.callId,
            tool: 'exit_plan_mode',
            summary: 'Leave plan mode and start working on this plan',
            reason: args.plan,
          }
          const decision = await this.ctx.approval.request(context.session, input, context.signal)
          const approved = decision.answer !== 'reject' && decision.actor !== undefined
          if (!approved)
            return `The plan was not approved (${decision.note ?? decision.by}): the session stays in plan mode. Revise the plan or ask the user what to change.`
          const requestId = context.session.last('approval/decided')?.data.requestId
          this.exit(context.session, decision.actor!, requestId)
          return "The user approved the plan: plan mode is over and your tools work again under the session's permissions. Start on the plan."
        },
      }),
    )
  }
}
