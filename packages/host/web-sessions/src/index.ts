// Sessions, agents and approvals over the web host (docs/architecture.md, "Surfaces").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { unknownCommandNotice } from '@dsh/commands'
import type { Agent, UserContent } from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/attachment'
import { EFFORTS, type Route } from '@dsh/llm'
import { PRESET_NAMES } from '@dsh/permission-presets'
import { DSH_STOPPED } from '@dsh/session'
import type {} from '@dsh/session-query'
import type {} from '@dsh/session-admin'
import type {} from '@dsh/settings'
import type {} from '@dsh/token-meter'
import type { Frame, Methods, WireRoute } from '@dsh/web-protocol'
import { WebError, type WebClient } from '@dsh/webserver'
import { PendingApprovals } from './approvals.ts'
import { listProviders } from './models.ts'
import { optionalService } from './optional.ts'
import { pageOf } from './page.ts'
import { SessionReader } from './reader.ts'
import { IdleRelease } from './release.ts'
import { SessionSearch } from './search.ts'
import { openSessionStream } from './stream.ts'
import { defaultRoute, listSessions, viewSession } from './views.ts'
import { registerReview } from './review.ts'
import { registerAgentModes } from './agent-modes.ts'

export { pageOf } from './page.ts'

export interface Config {
  pageEvents: number
  maxPageEvents: number
  maxReplayEvents: number
  readCacheSessions: number
  readCacheMs: number
  searchMaxSessions: number
  searchMaxHits: number
  searchCacheSessions: number
  snippetChars: number
  idleReleaseMs: number
}

export const Config: Schema<Config> = Schema.object({
  pageEvents: Schema.natural().min(1).default(300).description('Events per page when the page asks for no size.'),
  maxPageEvents: Schema.natural().min(1).default(2000).description('Largest page a tab may ask for.'),
  maxReplayEvents: Schema.natural()
    .default(5000)
    .description('Longest gap a reconnecting tab is replayed; a longer one reloads by pages.'),
  readCacheSessions: Schema.natural()
    .default(4)
    .description('Stored (not running) logs kept in memory while a tab pages through them.'),
  readCacheMs: Schema.natural().default(15_000).description('How long a stored log read for paging is reused.'),
  searchMaxSessions: Schema.natural().min(1).default(500).description('Newest sessions a search looks through.'),
  searchMaxHits: Schema.natural().min(1).default(50).description('Hits a search returns at most.'),
  searchCacheSessions: Schema.natural().default(500).description('Sessions whose message text is kept for search.'),
  snippetChars: Schema.natural().min(20).default(140).description("Length of a search hit's excerpt."),
  idleReleaseMs: Schema.natural()
    .default(600_000)
    .description(
      'An agent the web app opened is disposed (its log flushed, its writer lease freed for `dsh resume`) after this long idle, with no approval waiting and no tab subscribed; the next message resumes it. 0: never.',
    ),
})

declare module '@dsh/settings' {
  interface Settings {
    'web.defaultPreset': string
  }
}

export const name = 'web-sessions'
export const inject = ['app', 'webserver', 'sessions', 'agents', 'approval', 'llm', 'settings']

/**
 * The wire schema (checked by the host) knows a route's effort only as a string: the efforts a model may be
 * asked for are `@dsh/llm`'s, checked here.
 */
function checkedRoute(route: WireRoute): Route {
  if (route.effort !== undefined && !(EFFORTS as readonly string[]).includes(route.effort)) {
    throw new WebError('BAD_PARAMS', `route.effort: "${route.effort}" is not one of ${EFFORTS.join(', ')}`)
  }
  return route as Route
}

export function apply(ctx: Context, config: Config) {
  const web = ctx.webserver
  const presets = optionalService(ctx, 'permissionPresets')
  const meter = optionalService(ctx, 'tokenMeter')
  const attachments = optionalService(ctx, 'attachments')
  const sessionQuery = optionalService(ctx, 'sessionQuery')
  const sessionAdmin = optionalService(ctx, 'sessionAdmin')
  const reader = new SessionReader(ctx, config)
  ctx.settings.define('web.defaultPreset', Schema.union(['', ...PRESET_NAMES]).default(''), {
    description:
      "Permission preset of sessions started from the web app (logged as their first choice); empty: the presets row's default.",
  })
  const search = new SessionSearch(config, async (id) => (await reader.read(id)).events)

  // The `sessions` channel: the sidebar hears of new sessions, running agents and waiting approvals.
  const watchers = new Set<WebClient>()
  const broadcast = (frame: Frame) => {
    for (const client of watchers) client.send(frame)
  }
  web.channel(ctx, 'sessions', {
    open(client) {
      watchers.add(client)
      return () => watchers.delete(client)
    },
  })
  const approvals = new PendingApprovals((id) => {
    broadcast({ ch: 'sessions', key: '*', type: 'approvals', sessionId: id, pending: approvals.count(id) })
    release.consider(id)
  })
  const release = new IdleRelease(ctx, config.idleReleaseMs, (id) => approvals.count(id))
  ctx.approval.answerer(ctx, (request, signal) => approvals.ask(request, signal), { actor: 'user:web-tab' })
  ctx.on('session/opened', (session) => broadcast({ ch: 'sessions', key: '*', type: 'changed', sessionId: session.id }))
  ctx.on('session/event', (session, event) => {
    if (event.type === 'turn/start' || event.type === 'turn/end' || event.type === 'user/message')
      broadcast({ ch: 'sessions', key: '*', type: 'changed', sessionId: session.id })
  })
  // The launch is ending (Ctrl+C, SIGTERM): turns started from the page stop and their `turn/end` is made
  // durable while every service is still up, instead of being repaired as a crash on the next resume. Nobody
  // cancelled them: they end `interrupted` (DSH_STOPPED), and the page offers to continue them.
  ctx.on('app/draining', async () => {
    const running = ctx.agents.list().filter((agent) => agent.running)
    for (const agent of running) agent.cancel('dsh is stopping', DSH_STOPPED)
    await Promise.all(
      running.map(async (agent) => {
        await agent.whenIdle()
        await agent.session.flush()
      }),
    )
  })
  ctx.on('agent/status', (agent, status) =>
    broadcast({
      ch: 'sessions',
      key: '*',
      type: 'agent',
      sessionId: agent.session.id,
      agent: status === 'disposed' ? null : status,
    }),
  )

  web.channel(ctx, 'session', {
    open: (client, key, params) => {
      const stop = openSessionStream(ctx, reader, config.maxReplayEvents, client, key, params)
      const unsubscribed = release.subscribed(key)
      // Context pressure rides along when the meter is mounted: the page shows it beside the composer.
      const pressure = ctx.on('session/event', (session, event) => {
        const tokenMeter = meter()
        if (
          !tokenMeter ||
          session.id !== key ||
          (event.type !== 'step/end' && event.type !== 'turn/end' && event.type !== 'user/message')
        )
          return
        client.send({ ch: 'session', key, type: 'pressure', pressure: tokenMeter.pressure(session) })
      })
      return () => {
        stop()
        pressure()
        unsubscribed()
      }
    },
  })

  const agentFor = (id: string): Promise<Agent> => release.agentFor(id)
  const requirePresets = () => {
    const service = presets()
    if (!service) throw new WebError('UNAVAILABLE', 'no permission presets plugin is mounted in this profile')
    return service
  }
  type M<K extends keyof Methods> = Methods[K]

  web.method<M<'sessions.list'>['params'], M<'sessions.list'>['result']>(ctx, 'sessions.list', {
    handle: async () => ({ sessions: await listSessions(ctx, approvals), launchCwd: ctx.app.cwd }),
  })

  web.method<M<'sessions.search'>['params'], M<'sessions.search'>['result']>(ctx, 'sessions.search', {
    // The full-text index when it is mounted (the same hits as `dsh sessions search --all-workspaces`), else a
    // scan of the newest logs' message text.
    handle: async ({ query }) => {
      const indexed = sessionQuery()
      if (!indexed) return { hits: await search.search(query, await ctx.sessions.list()) }
      const hits = await indexed.search(query, { limit: config.searchMaxHits })
      return {
        hits: hits.map((hit) => ({
          sessionId: hit.sessionId,
          field: 'text' as const,
          seq: hit.seq,
          snippet: hit.snippet.text,
          highlights: hit.snippet.highlights,
        })),
      }
    },
  })

  web.method<M<'sessions.open'>['params'], M<'sessions.open'>['result']>(ctx, 'sessions.open', {
    handle: async ({ sessionId: id }) => {
      const view = await viewSession(ctx, reader, approvals, { presets }, id)
      const session = ctx.sessions.get(id)
      const tokenMeter = meter()
      return session && tokenMeter ? { ...view, pressure: tokenMeter.pressure(session) } : view
    },
  })

  web.method<M<'sessions.page'>['params'], M<'sessions.page'>['result']>(ctx, 'sessions.page', {
    handle: async ({ sessionId: id, before, limit }) => {
      const { events } = await reader.read(id)
      return pageOf(events, before ?? events.length, Math.min(limit ?? config.pageEvents, config.maxPageEvents))
    },
  })

  const modes = registerAgentModes(ctx, agentFor)

  web.method<M<'sessions.create'>['params'], M<'sessions.create'>['result']>(ctx, 'sessions.create', {
    handle: async ({ cwd, route, preset: asked, agentPreset, planMode }) => {
      const preset = asked || (presets() ? ctx.settings.get('web.defaultPreset') : '')
      // Only inside the openable roots (home, launch folder, --allow-root), symlinks resolved: the same
      // rule as the picker, so a typed path cannot reach what browsing cannot.
      await web.folders.workspace(cwd)
      const wanted = route && checkedRoute(route)
      if (wanted) ctx.llm.adapter(wanted.provider)
      if (preset) requirePresets().get(preset)
      if (agentPreset) modes.checkPreset(agentPreset)
      const agent = await ctx.agents.create({ cwd, ...(wanted ? { route: wanted } : {}) })
      modes.apply(agent.session, { ...(agentPreset ? { agentPreset } : {}), ...(planMode ? { planMode } : {}) })
      // A preset the tab chose is the tab's; one taken from web.defaultPreset is the settings'.
      if (preset) requirePresets().set(agent.session, preset, asked ? 'user:web-tab' : 'user:settings')
      await agent.session.flush()
      release.adopt(agent)
      return { sessionId: agent.session.id }
    },
  })

  registerReview(ctx, agentFor, (agent) => void release.adopt(agent))

  web.method<M<'sessions.fork'>['params'], M<'sessions.fork'>['result']>(ctx, 'sessions.fork', {
    handle: async ({ sessionId: id, atSeq }) => ({
      sessionId: release.adopt(await ctx.agents.fork(id, atSeq)).session.id,
    }),
  })

  const requireAdmin = () => {
    const admin = sessionAdmin()
    if (!admin) throw new WebError('UNAVAILABLE', 'no session-admin row is mounted in this profile')
    return admin
  }
  web.method<M<'sessions.rename'>['params'], M<'sessions.rename'>['result']>(ctx, 'sessions.rename', {
    handle: async ({ sessionId: id, title }) => {
      await requireAdmin().rename(id, title)
      reader.forget(id)
      broadcast({ ch: 'sessions', key: '*', type: 'changed', sessionId: id })
      return { title: (await ctx.sessions.list()).find((summary) => summary.id === id)?.title ?? title }
    },
  })
  // The sidebar asks before it calls this; an idle agent the web app holds is let go by ctx.sessionAdmin.
  web.method<M<'sessions.delete'>['params'], M<'sessions.delete'>['result']>(ctx, 'sessions.delete', {
    handle: async ({ sessionId: id }) => {
      const deleted = await requireAdmin().delete(id)
      for (const each of deleted) {
        reader.forget(each)
        broadcast({ ch: 'sessions', key: '*', type: 'changed', sessionId: each })
      }
      return { deleted }
    },
  })

  web.method<M<'agent.send'>['params'], M<'agent.send'>['result']>(ctx, 'agent.send', {
    handle: async ({ sessionId: id, text, mode, images }) => {
      if (!text.trim() && !images?.length) throw new WebError('BAD_PARAMS', 'the message is empty')
      // Inline images enter the log as references: the attachments plugin stores them when the step claims
      // the input. Without it they would be logged whole, so they are refused.
      if (images?.length && !attachments())
        throw new WebError('UNAVAILABLE', 'images cannot be attached: no attachments plugin is mounted in this profile')
      const agent = await agentFor(id)
      const content: UserContent = images?.length
        ? [
            ...(text.trim() ? [{ type: 'text' as const, text }] : []),
            ...images.map((image) => ({ type: 'image' as const, mediaType: image.mediaType, data: image.data })),
          ]
        : text
      return { messageId: mode === 'steer' ? agent.steer(content) : agent.followup(content) }
    },
  })

  // Slash commands (docs/architecture.md, "Skills and commands"): the composer completes on `/` and sends a
  // line that starts with one here first.
  const commands = () => {
    const service = ctx.get('commands')
    if (!service) throw new WebError('UNAVAILABLE', 'no commands row is mounted in this profile')
    return service
  }
  web.method<M<'commands.list'>['params'], M<'commands.list'>['result']>(ctx, 'commands.list', {
    handle: async ({ sessionId: id }) => {
      const cwd = ctx.agents.bySession(id)?.cwd ?? (await ctx.sessions.list()).find((summary) => summary.id === id)?.cwd
      if (!cwd) throw new WebError('NOT_FOUND', `no session ${id}`)
      return { commands: await commands().list(cwd) }
    },
  })
  web.method<M<'commands.run'>['params'], M<'commands.run'>['result']>(ctx, 'commands.run', {
    handle: async ({ sessionId: id, line }) => {
      const agent = await agentFor(id)
      const outcome = await commands().run(agent, line)
      if (!outcome.handled)
        return {
          handled: false,
          ...(outcome.unknown ? { unknown: outcome.unknown, notice: unknownCommandNotice(outcome.unknown) } : {}),
        }
      if ('error' in outcome) return { handled: true, name: outcome.name, error: outcome.error }
      const messageId = outcome.prompt !== undefined ? agent.followup(outcome.prompt) : undefined
      if (outcome.sessionId) {
        const opened = ctx.agents.bySession(outcome.sessionId)
        if (opened) release.adopt(opened)
      }
      return {
        handled: true,
        name: outcome.name,
        output: outcome.output,
        ...(messageId ? { messageId } : {}),
        ...(outcome.sessionId ? { newSessionId: outcome.sessionId } : {}),
      }
    },
  })

  web.method<M<'attachments.get'>['params'], M<'attachments.get'>['result']>(ctx, 'attachments.get', {
    handle: async ({ sessionId: id, sha256 }) => {
      const store = attachments()
      if (!store) throw new WebError('UNAVAILABLE', 'no attachments plugin is mounted in this profile')
      const session = ctx.sessions.get(id)
      if (!session)
        throw new WebError(
          'NOT_FOUND',
          'images of a session are shown while it runs in this window (send a message to resume it)',
        )
      const { data, image } = await store.load(session, sha256)
      return { mediaType: image.mediaType, data: Buffer.from(data).toString('base64') }
    },
  })

  web.method<M<'host.info'>['params'], M<'host.info'>['result']>(ctx, 'host.info', {
    handle: () => ({ version: ctx.app.version, profile: ctx.app.profile, attachments: !!attachments() }),
  })

  web.method<M<'agent.cancel'>['params'], M<'agent.cancel'>['result']>(ctx, 'agent.cancel', {
    handle: ({ sessionId: id }) => {
      const agent = ctx.agents.bySession(id)
      if (!agent?.running) return { cancelled: false }
      agent.cancel('cancelled from the web app')
      return { cancelled: true }
    },
  })

  web.method<M<'agent.setRoute'>['params'], M<'agent.setRoute'>['result']>(ctx, 'agent.setRoute', {
    handle: async ({ sessionId: id, route }) => {
      const wanted = checkedRoute(route)
      ctx.llm.adapter(wanted.provider)
      const agent = await agentFor(id)
      agent.setRoute(wanted)
      await agent.session.flush()
      return { route: agent.route }
    },
  })

  web.method<M<'agent.setPreset'>['params'], M<'agent.setPreset'>['result']>(ctx, 'agent.setPreset', {
    handle: async ({ sessionId: id, preset }) => {
      const service = requirePresets()
      service.get(preset)
      const agent = await agentFor(id)
      const state = service.set(agent.session, preset, 'user:web-tab')
      await agent.session.flush()
      return { preset: state.preset ?? preset }
    },
  })

  web.method<M<'presets.list'>['params'], M<'presets.list'>['result']>(ctx, 'presets.list', {
    handle: () => {
      const service = presets()
      return service
        ? { presets: service.list().map((preset) => preset.name), defaultPreset: service.config.default }
        : { presets: [] }
    },
  })

  web.method<M<'approvals.answer'>['params'], M<'approvals.answer'>['result']>(ctx, 'approvals.answer', {
    handle: ({ requestId, answer, rule }) => {
      approvals.answer(requestId, answer, rule, (request, edited) => {
        const session = ctx.sessions.get(request.sessionId)
        if (!session) throw new Error(`session ${request.sessionId} is not open`)
        return ctx.approval.checkRule(session, request, edited)
      })
      return { answered: true }
    },
  })

  web.method<M<'models.list'>['params'], M<'models.list'>['result']>(ctx, 'models.list', {
    handle: async () => ({ defaultRoute: defaultRoute(ctx), providers: await listProviders(ctx) }),
  })
}
