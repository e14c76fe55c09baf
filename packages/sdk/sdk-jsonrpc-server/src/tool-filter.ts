// Which tools a program lets an SDK session use (docs/architecture.md, "Surfaces"). The filter is a logged
// fact (`sdk/tool-filter`), so the request's tool list — logged in `request/header` — follows from the log;
// the same filter refuses a call of a filtered tool the model names anyway.
import type { Context } from '@dsh/cordis'
import type { Session } from '@dsh/session'
import type {} from '@dsh/agent'
import type {} from '@dsh/tools'

export interface ToolFilter {
  allowed?: string[]
  disallowed?: string[]
}

declare module '@dsh/session' {
  interface SessionEventMap {
    /** The tools a program allows (`allowed`: only these) and forbids in this session, from this event on. */
    'sdk/tool-filter': ToolFilter
  }
}

const names = (value: unknown) => Array.isArray(value) && value.every((name) => typeof name === 'string' && name.length > 0)

function filterProblem(data: any): string | undefined {
  if (typeof data !== 'object' || data === null) return 'must be an object'
  if (data.allowed !== undefined && !names(data.allowed)) return 'allowed must be a list of tool names'
  if (data.disallowed !== undefined && !names(data.disallowed)) return 'disallowed must be a list of tool names'
  return Object.keys(data).every((key) => key === 'allowed' || key === 'disallowed') ? undefined : 'has a key other than allowed and disallowed'
}

/** Whether the session's filter in force lets `tool` be offered and run. */
export function permits(session: Session, tool: string): boolean {
  const filter = session.last('sdk/tool-filter')?.data
  if (!filter) return true
  if (filter.allowed && !filter.allowed.includes(tool)) return false
  return !filter.disallowed?.includes(tool)
}

/** Logs a new filter when the params give one (either field); the last one logged is in force. */
export function logToolFilter(session: Session, params: { allowedTools?: string[]; disallowedTools?: string[] }): void {
  if (params.allowedTools === undefined && params.disallowedTools === undefined) return
  session.append('sdk/tool-filter', { ...(params.allowedTools ? { allowed: params.allowedTools } : {}), ...(params.disallowedTools ? { disallowed: params.disallowedTools } : {}) })
}

export function applyToolFilter(ctx: Context): void {
  // Ignorable: a session an SDK program filtered still opens in a composition without this surface.
  ctx.sessions.defineKind(ctx, 'sdk/tool-filter', { ignorable: true, validate: filterProblem })
  ctx.on('agent/request', async (draft, next) => {
    const session = draft.agent.session
    if (session.last('sdk/tool-filter')) draft.request.tools = draft.request.tools?.filter((tool) => permits(session, tool.name))
    return next()
  })
  // First in the chain: no grant or approval may run what the program filtered out.
  ctx.on(
    'tools/pre-execute',
    async (invocation, next) =>
      permits(invocation.context.session, invocation.name) ? next() : { action: 'deny', reason: `the program that runs this session does not allow the tool ${invocation.name} (sdk/tool-filter)` },
    { prepend: true },
  )
}
