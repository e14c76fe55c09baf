import type { Context } from '@dsh/cordis'
import type { SessionEvent, SessionEventMap } from '@dsh/session'
import { foldTitle, type TitleSource } from '@dsh/session-admin'
import type { AgentState, SessionListItem, SessionView, WireRoute } from '@dsh/web-protocol'
import type { PendingApprovals } from './approvals.ts'
import type { SessionReader } from './reader.ts'

export interface Optional {
  presets(): Context['permissionPresets'] | undefined
}

export function agentState(ctx: Context, sessionId: string): AgentState {
  const agent = ctx.agents.bySession(sessionId)
  return agent ? (agent.running ? 'running' : 'idle') : null
}

/** The route new sessions start on (the user's `model.*` settings, else the `agents` row's route). */
export function defaultRoute(ctx: Context): WireRoute {
  return { ...ctx.agents.defaultRoute() }
}

function lastOf(events: readonly SessionEvent[], type: string): SessionEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.type === type) return events[i]
  return undefined
}

export async function listSessions(ctx: Context, approvals: PendingApprovals): Promise<SessionListItem[]> {
  const summaries = await ctx.sessions.list()
  return summaries.map((summary) => ({
    id: summary.id,
    cwd: summary.cwd,
    createdAt: summary.createdAt,
    updatedAt: summary.updatedAt,
    events: summary.events,
    turns: summary.turns,
    ...(summary.title ? { title: summary.title } : {}),
    ...(summary.firstPrompt ? { firstPrompt: summary.firstPrompt } : {}),
    ...(summary.archived ? { archived: true } : {}),
    ...(summary.damaged ? { damaged: summary.damaged } : {}),
    status: summary.status,
    lockedElsewhere: summary.live && !ctx.sessions.get(summary.id),
    agent: agentState(ctx, summary.id),
    pendingApprovals: approvals.count(summary.id),
    ...(summary.parent ? { parent: summary.parent } : {}),
    ...(summary.subagentOf ? { subagentOf: summary.subagentOf } : {}),
  }))
}

export async function viewSession(
  ctx: Context,
  reader: SessionReader,
  approvals: PendingApprovals,
  optional: Optional,
  sessionId: string,
): Promise<SessionView> {
  const { header, events, live } = await reader.read(sessionId)
  const agent = ctx.agents.bySession(sessionId)
  const route =
    agent?.route ??
    (lastOf(events, 'model/route')?.data as { route?: WireRoute } | undefined)?.route ??
    defaultRoute(ctx)
  const presets = optional.presets()
  let preset: string | undefined
  if (presets) {
    const session = ctx.sessions.get(sessionId)
    preset = session
      ? presets.current(session).preset
      : ((lastOf(events, 'permission/preset')?.data as { preset?: string } | undefined)?.preset ??
        presets.config.default)
  }
  let lockedElsewhere = false
  if (!live) lockedElsewhere = !!(await ctx.sessions.list()).find((summary) => summary.id === sessionId)?.live
  const title = events.reduce<{ title?: string; titleSource?: TitleSource }>(
    (named, event) =>
      event.type === 'session/title' ? foldTitle(named, event.data as SessionEventMap['session/title']) : named,
    {},
  ).title
  const agentPreset = (lastOf(events, 'agent/preset')?.data as { name?: string } | undefined)?.name
  const planMode = (lastOf(events, 'plan/mode')?.data as { active?: boolean } | undefined)?.active
  return {
    id: header.id,
    cwd: header.cwd,
    createdAt: header.createdAt,
    ...(header.parent ? { parent: header.parent } : {}),
    length: events.length,
    agent: agentState(ctx, sessionId),
    route: { ...route },
    ...(preset ? { preset } : {}),
    ...(agentPreset ? { agentPreset } : {}),
    ...(planMode ? { planMode } : {}),
    pendingApprovals: approvals.of(sessionId),
    lockedElsewhere,
    ...(title ? { title } : {}),
  }
}
