// The `task` tool (docs/architecture.md, "Subagents").
import type {} from '@dsh/agent'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { SubagentError, type SubagentResult } from '@dsh/subagent'
import { defineTool, ToolError, Type, type Static } from '@dsh/tools'

export interface Config {
  toolName: string
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  toolName: Schema.string().default('task').description('The name the model calls the tool by.'),
})

export const name = 'tool-subagent'
export const inject = ['tools', 'subagents', 'agents']

const taskArguments = Type.Object(
  {
    description: Type.String({ description: 'Three to five words saying what the subagent does (shown to the user).' }),
    prompt: Type.String({
      description:
        'The whole task: the subagent sees nothing else of this conversation, so say what to do, where, and what to report back.',
    }),
    agent_type: Type.Optional(
      Type.String({
        description:
          'The kind of subagent: `general` (default, your tools), `explore` (read-only search and reading), or a type of the workspace.',
      }),
    ),
    model: Type.Optional(
      Type.String({
        description: "A model of the current provider for the subagent (default: the type's, else yours).",
      }),
    ),
    session: Type.Optional(
      Type.String({
        description:
          'The session id of a subagent you started, to send it `prompt` as a follow-up instead of starting a new one.',
      }),
    ),
  },
  { additionalProperties: false },
)

export type TaskArgs = Static<typeof taskArguments>

/** The model reads the child's final text; the footer names its session so it can be continued. */
function output(result: SubagentResult): string {
  if (result.status === 'aborted')
    throw new ToolError(
      'SUBAGENT_ABORTED',
      `The subagent (session ${result.childSessionId}) was stopped before it finished.`,
    )
  if (result.status === 'failed') {
    const where = result.childSessionId ? ` (session ${result.childSessionId})` : ''
    throw new ToolError(
      'SUBAGENT_FAILED',
      `The subagent${where} failed: ${result.error?.code ?? 'SUBAGENT_FAILED'}: ${result.error?.message ?? 'no reason given'}`,
    )
  }
  return `${result.text || '(the subagent gave no final text)'}\n\n[subagent session ${result.childSessionId}: completed; pass session: "${result.childSessionId}" to send it a follow-up]`
}

/**
 * `task`: the parent's model delegates to a child agent (ctx.subagents) and gets its final text back as the
 * tool result, or a typed failure. Safe to run beside other calls: each child acts only through its own
 * tool pipeline, under its own ceiling; how many run at once is the `subagent.maxConcurrent` setting.
 */
export function apply(ctx: Context, config: Config) {
  ctx.tools.register(
    ctx,
    defineTool({
      name: config.toolName,
      description:
        'Delegate a self-contained task to a subagent with its own conversation, and get its final answer back. It works in this workspace with at most your permissions; it cannot ask you questions. Several calls in one response run in parallel. Good for broad searches and independent changes; give it everything it needs in `prompt`.',
      parameters: taskArguments,
      concurrencySafe: true,
      // A child's turn ends with its own steps: the pipeline's timeout would cut a long task short.
      timeoutMs: 0,
      summarize: (args: TaskArgs) =>
        `${config.toolName}${args.agent_type ? ` (${args.agent_type})` : ''}: ${args.description}`,
      async execute(args: TaskArgs, context) {
        const parent = ctx.agents.get(context.agentId)
        if (!parent) throw new ToolError('SUBAGENT_FAILED', 'This call has no agent to delegate from.')
        try {
          const result = args.session
            ? await ctx.subagents.continue(parent, args.session, args.prompt, context.signal)
            : await ctx.subagents.run(
                parent,
                {
                  description: args.description,
                  prompt: args.prompt,
                  agentType: args.agent_type,
                  model: args.model,
                  callId: context.callId,
                },
                context.signal,
              )
          return output(result)
        } catch (error) {
          if (error instanceof SubagentError) throw new ToolError(error.code, `${error.message}.`)
          throw error
        }
      },
    }),
  )
}
