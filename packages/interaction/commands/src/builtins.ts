import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import { EFFORTS, type Effort, type Route, type Usage } from '@dsh/llm'
import type { CommandDefinition } from './index.ts'

const failure = (code: string, message: string) => Object.assign(new Error(message), { code })
const routeText = (route: Route) => `${route.provider}/${route.model}${route.effort ? ` (effort ${route.effort})` : ''}`

/** The built-in commands besides /help: /model, /clear, /fork, /cost. They read and write only the log. */
export function builtinCommands(ctx: Context): CommandDefinition[] {
  return [
    {
      name: 'model',
      description: 'Show the model, or switch it for this session from the next request on.',
      argumentHint: '[provider/model [effort]]',
      run: (args, { agent }) => switchModel(ctx, agent, args),
    },
    {
      name: 'clear',
      description: 'Start a new session in this workspace on the same model (this one stays stored).',
      run: async (_args, { agent }) => {
        const fresh = await agents(ctx).create({ cwd: agent.cwd, route: agent.route })
        return {
          output: `Started a new session ${fresh.session.id}; ${agent.session.id} is kept (dsh resume ${agent.session.id}).`,
          sessionId: fresh.session.id,
        }
      },
    },
    {
      name: 'fork',
      description: 'Copy this session (up to an event seq, default: all of it) into a new session and continue there.',
      argumentHint: '[seq]',
      run: async (args, { agent }) => {
        if (agent.running) throw failure('COMMAND_BUSY', 'a turn is running: fork when it has ended')
        const last = agent.session.events.length - 1
        const seq = args ? Number(args) : last
        if (!Number.isInteger(seq) || seq < 0 || seq > last)
          throw failure('COMMAND_BAD_ARGS', `the seq to fork at must be a whole number from 0 to ${last}`)
        const fork = await agents(ctx).fork(agent.session.id, seq)
        return {
          output: `Forked ${agent.session.id} at seq ${seq} into ${fork.session.id}.`,
          sessionId: fork.session.id,
        }
      },
    },
    {
      name: 'cost',
      description: "This session's logged token usage (model requests and compaction summaries).",
      run: (_args, { agent }) => costText(agent),
    },
  ]
}

function agents(ctx: Context) {
  const service = ctx.get('agents')
  if (!service) throw failure('COMMAND_UNAVAILABLE', 'no agents service is mounted')
  return service
}

function switchModel(ctx: Context, agent: Agent, args: string): string {
  if (!args) return `Model: ${routeText(agent.route)}. Providers: ${ctx.get('llm')?.providers().join(', ') || 'none'}.`
  const [spec, effort, extra] = args.split(/\s+/)
  const at = spec!.indexOf('/')
  const route: Route =
    at > 0
      ? { provider: spec!.slice(0, at), model: spec!.slice(at + 1) }
      : { provider: agent.route.provider, model: spec! }
  const providers = ctx.get('llm')?.providers() ?? []
  if (extra !== undefined || !route.model) throw failure('COMMAND_BAD_ARGS', 'usage: /model provider/model [effort]')
  if (!providers.includes(route.provider))
    throw failure(
      'COMMAND_BAD_ARGS',
      `no model provider "${route.provider}" is mounted (mounted: ${providers.join(', ') || 'none'})`,
    )
  if (effort !== undefined && !(EFFORTS as readonly string[]).includes(effort))
    throw failure('COMMAND_BAD_ARGS', `effort must be one of ${EFFORTS.join(', ')}`)
  if (effort) route.effort = effort as Effort
  agent.setRoute(route)
  return `Model: ${routeText(route)} from the next request on.`
}

function costText(agent: Agent): string {
  const total: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
  let requests = 0
  for (const event of agent.session.events as readonly { type: string; data: any }[]) {
    const usage: Usage | undefined =
      event.type === 'assistant/message' || event.type === 'compaction/end' ? event.data.usage : undefined
    if (!usage) continue
    requests += event.type === 'compaction/end' ? (event.data.requests ?? 1) : 1
    for (const key of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) total[key] += usage[key] ?? 0
  }
  return `${requests} model request${requests === 1 ? '' : 's'} in this session: input ${total.input}, cached ${total.cacheRead}, cache-write ${total.cacheWrite}, output ${total.output} tokens (prices: dsh usage).`
}
