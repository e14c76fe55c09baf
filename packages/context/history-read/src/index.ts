// The `history_read` tool (issue #18 part 4; docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent } from '@dsh/agent'
import { defineTool, toSchema, Type, type Static } from '@dsh/tools'
import type { ToolSchema } from '@dsh/llm'
import { page } from './page.ts'
import { hasSummary, summarizedEvents } from './summarized.ts'

export { page, type PageQuery } from './page.ts'
export { hasSummary, summarizedEvents, type SummarizedEvent } from './summarized.ts'

export interface Config {
  defaultMaxTokens: number
  maxTokens: number
  charsPerToken: number
}

export const name = 'history-read'
export const inject = ['tools']

export const Config: Schema<Config> = Schema.object({
  defaultMaxTokens: Schema.natural()
    .min(100)
    .default(4000)
    .description('Tokens one page of summarized history holds when the model asks for no budget.'),
  maxTokens: Schema.natural().min(100).default(16_000).description('The largest page the model may ask for (tokens).'),
  charsPerToken: Schema.number()
    .min(1)
    .default(4)
    .description('Characters per token when a page is measured against its budget.'),
})

const parameters = (config: Config) =>
  Type.Object(
    {
      turn: Type.Optional(
        Type.Integer({ minimum: 1, description: 'Only events of this turn of the session (1 is the first).' }),
      ),
      search: Type.Optional(
        Type.String({ minLength: 1, description: 'Only events whose text contains this (case-insensitive).' }),
      ),
      fromSeq: Type.Optional(
        Type.Integer({ minimum: 0, description: 'Start at this event (the next page of an earlier call).' }),
      ),
      maxTokens: Type.Optional(
        Type.Integer({
          minimum: 100,
          maximum: config.maxTokens,
          description: `Size of the page (default ${config.defaultMaxTokens} tokens).`,
        }),
      ),
    },
    { additionalProperties: false },
  )

export type HistoryReadArgs = Static<ReturnType<typeof parameters>>

/**
 * Once part of a session was summarized (a `user/message { replaces }` in its log), its agent gets the
 * `history_read` tool: it reads the replaced events back from the log, by turn, by search string, a page
 * at a time. It is registered for that agent only, on the first request after the summary (its schema is
 * added to that request, before the loop logs the header, so the request stays what the log derives).
 */
export function apply(ctx: Context, config: Config) {
  const tool = defineTool({
    name: 'history_read',
    description:
      'Read back earlier parts of this conversation that were summarized to save context: the messages, tool calls and results exactly as they were. Filter by turn or by a search string; results come a page at a time (call again with fromSeq for the next page).',
    parameters: parameters(config),
    concurrencySafe: true,
    summarize: (args: HistoryReadArgs) =>
      `history_read${args.turn ? ` turn ${args.turn}` : ''}${args.search ? ` "${args.search}"` : ''}`,
    async execute(args: HistoryReadArgs, context) {
      const maxChars = (args.maxTokens ?? config.defaultMaxTokens) * config.charsPerToken
      return page(summarizedEvents(context.session.events), {
        maxChars,
        ...(args.turn !== undefined ? { turn: args.turn } : {}),
        ...(args.search ? { search: args.search } : {}),
        ...(args.fromSeq !== undefined ? { fromSeq: args.fromSeq } : {}),
      })
    },
  })
  const offered = new WeakSet<Agent>()
  // Prepended, so this runs after every other listener's own work (a summary made at this boundary counts).
  ctx.on(
    'agent/request',
    async (draft, next) => {
      await next()
      const { agent } = draft
      if (!offered.has(agent) && hasSummary(agent.session.events)) {
        offered.add(agent)
        ctx.tools.register(agent.scope, tool, { agentId: agent.id })
      }
      if (offered.has(agent) && !draft.request.tools.some((schema) => schema.name === tool.name))
        draft.request.tools = withTool(draft.request.tools, toSchema(tool), ctx.tools.schemas(agent.id))
    },
    { prepend: true },
  )
}

/**
 * `tools` with `schema` where the registry lists it among the agent's tools, so this request's tool list is
 * the next one's: appended at the end, the next request (which has it in the registry's order) would break
 * the provider's cached prefix a second time (docs/architecture.md, "Usage and cost").
 */
function withTool(tools: readonly ToolSchema[], schema: ToolSchema, registry: readonly ToolSchema[]): ToolSchema[] {
  const order = registry.map((other) => other.name)
  const later = new Set(order.slice(order.indexOf(schema.name) + 1))
  const at = tools.findIndex((other) => later.has(other.name))
  const out = [...tools]
  out.splice(at === -1 ? out.length : at, 0, schema)
  return out
}
