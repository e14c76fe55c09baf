// Which tools a program lets an SDK session use (docs/architecture.md, "Surfaces"). The filter is a logged
// fact (`sdk/tool-filter`) read through `ctx.tools.useFilter`, like an agent preset: the request's tool list
// (logged in `request/header`), the system prompt's tool names and the pipeline agree, so a filtered tool the
// model names anyway is UNKNOWN_TOOL before any grant, approval or policy runs.
import type { Context } from '@dsh/cordis'
import { Type, type Session, type Static } from '@dsh/session'
import type {} from '@dsh/agent'
import type {} from '@dsh/tools'

const toolNames = Type.Array(Type.String({ minLength: 1 }))

/** The tools a program allows (`allowed`: only these) and forbids in this session, from this event on. Its type and its check (issue #28.6). */
const ToolFilterData = Type.Object(
  { allowed: Type.Optional(toolNames), disallowed: Type.Optional(toolNames) },
  { additionalProperties: false, fieldIs: 'field of a tool filter' },
)
export type ToolFilter = Static<typeof ToolFilterData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'sdk/tool-filter': ToolFilter
  }
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
  session.append('sdk/tool-filter', {
    ...(params.allowedTools ? { allowed: params.allowedTools } : {}),
    ...(params.disallowedTools ? { disallowed: params.disallowedTools } : {}),
  })
}

export function applyToolFilter(ctx: Context): void {
  // Ignorable: a session an SDK program filtered still opens in a composition without this surface.
  ctx.sessions.defineKind(ctx, 'sdk/tool-filter', { ignorable: true, schema: ToolFilterData })
  // A subagent is bounded by its ancestors' filters too: a program that forbids bash but allows `task` must
  // not get bash through a child.
  ctx.tools.useFilter(ctx, (agentId, name) => {
    for (let agent = ctx.agents.get(agentId); agent; agent = agent.parent)
      if (!permits(agent.session, name)) return false
    return true
  })
}
