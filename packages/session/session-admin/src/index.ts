// Session titles, rename and archive (docs/architecture.md, "Finding sessions").
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent, TurnResult } from '@dsh/agent'
import type { Route } from '@dsh/llm'
import { type EventKind, type Session, type SessionEvent, type SessionEventMap } from '@dsh/session'
import type {} from '@dsh/session-persistence'
import type {} from '@dsh/settings'
import type {} from '@dsh/commands'
import { SessionArchivedData, SessionTitleData, TitleRequestData, TitleResponseData } from './events.ts'
import { labelText, promptText, shorten } from './title-text.ts'
import { requestTitle } from './auto-title.ts'
import { deleteSession } from './delete.ts'
import { exportSession, importSessions } from './archive.ts'
import type { Manifest } from './archive-paths.ts'
import { SessionAdminError } from './errors.ts'

export { foldTitle, type TitleSource } from './events.ts'
export { SessionAdminError } from './errors.ts'
export { childIds } from './delete.ts'
export type { Manifest as SessionArchiveManifest } from './archive-paths.ts'
export { promptText, shorten, titleFromAnswer } from './title-text.ts'

declare module '@dsh/cordis' {
  interface Context {
    sessionAdmin: SessionAdmin
  }
}

declare module '@dsh/settings' {
  interface Settings {
    'sessions.autoTitle': boolean
  }
}

export interface Config {
  autoTitle: boolean
  route?: Route
  instruction: string
  promptChars: number
  titleChars: number
  maxOutputTokens: number
  timeoutMs: number
  maxUserTitleChars: number
  maxArchiveBytes: number
  maxUnpackedBytes: number
  maxEntries: number
}

const KINDS = ['session/title', 'session/archived', 'title/request', 'title/response'] as const

/**
 * `ctx.sessionAdmin`. Owns: the `session/title`, `session/archived`, `title/request` and `title/response`
 * kinds, the one auxiliary title request after a session's first turn (setting `sessions.autoTitle`), and
 * appending a rename or an archive to a session that is open here or stored. Must not own: how a list is
 * folded (persistence and the index read the events) or the request check (`@dsh/invariants`, purpose `title`).
 */
export class SessionAdmin extends Service {
  static inject = ['app', 'sessions', 'sessionPersistence', 'settings', 'llm']
  static Config: Schema<Config> = Schema.object({
    autoTitle: Schema.boolean()
      .default(true)
      .description(
        'Default of the `sessions.autoTitle` setting: name a session with one cheap model request after its first turn.',
      ),
    route: (
      Schema.union([
        Schema.object({ provider: Schema.string().required(), model: Schema.string().required() }),
        Schema.const(undefined),
      ]) as unknown as Schema<Route | undefined>
    ).description('The model of title requests (a cheap one); absent: the route the first turn used.'),
    instruction: Schema.string()
      .default(
        'You name chat sessions. Reply with a title of at most six words for the conversation that starts with the next message. Reply with the title only: no quotes, no punctuation at the end.',
      )
      .description('The system prompt of a title request.'),
    promptChars: Schema.natural()
      .min(16)
      .default(2000)
      .description('Characters of the first prompt (mention markup removed) sent in a title request.'),
    titleChars: Schema.natural()
      .min(8)
      .default(60)
      .description('Longest generated title kept (longer answers are cut).'),
    maxOutputTokens: Schema.natural().min(1).default(32).description('Output limit of a title request.'),
    timeoutMs: Schema.natural()
      .min(1)
      .default(15_000)
      .description('Longest the end of a first turn waits for its title; then the first prompt stands in.'),
    maxUserTitleChars: Schema.natural().min(1).default(200).description('Longest title a rename accepts.'),
    maxArchiveBytes: Schema.natural()
      .min(1)
      .default(2 * 1024 ** 3)
      .description('Largest session archive (.tar.gz) an import reads.'),
    maxUnpackedBytes: Schema.natural()
      .min(1)
      .default(8 * 1024 ** 3)
      .description(
        'Most bytes the entries of an imported archive may unpack to (their sizes summed before anything is written).',
      ),
    maxEntries: Schema.natural()
      .min(1)
      .default(200_000)
      .description('Most entries (files and folders) an imported archive may hold.'),
  })

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'sessionAdmin')
    ctx.sessions.defineKind(ctx, 'session/title', { ignorable: true, schema: SessionTitleData })
    ctx.sessions.defineKind(ctx, 'session/archived', { ignorable: true, schema: SessionArchivedData })
    ctx.sessions.defineKind(ctx, 'title/request', { ignorable: true, schema: TitleRequestData })
    ctx.sessions.defineKind(ctx, 'title/response', { ignorable: true, schema: TitleResponseData })
    ctx.settings.define('sessions.autoTitle', Schema.boolean().default(config.autoTitle), {
      description:
        'Name each new session with one cheap model request after its first turn (false: the first prompt, mention markup removed, names it).',
    })
    // `/rename <title>` wherever slash commands run (the web composer, ACP, the SDK's session/command).
    ctx.inject(['commands'], (inner) =>
      inner.commands.register(inner, {
        name: 'rename',
        description: 'Name this session (a title of yours is never replaced by a generated one).',
        argumentHint: '<title>',
        run: async (args, { agent }) => {
          if (!args) throw new SessionAdminError('INVALID_TITLE', 'give the new title: /rename <title>')
          await this.rename(agent.session.id, args)
          return `Renamed this session to "${labelText(args)}".`
        },
      }),
    )
    // Serial and awaited before `turn/end`: a one-shot `dsh -p` gets its title before the process exits.
    ctx.on('agent/turn-stopping', (agent, result) => this.titleAfterFirstTurn(agent, result))
  }

  /** Names a session as its user chose (trimmed, one line). A user's title is never replaced by a generated one. */
  async rename(id: string, title: string): Promise<void> {
    const clean = labelText(title)
    if (!clean) throw new SessionAdminError('INVALID_TITLE', `the title of session ${id} cannot be empty`)
    if (clean.length > this.config.maxUserTitleChars)
      throw new SessionAdminError(
        'INVALID_TITLE',
        `the title of session ${id} has ${clean.length} characters; at most ${this.config.maxUserTitleChars}`,
      )
    await this.appendFact(id, 'session/title', { title: clean, source: 'user' })
  }

  /** Hides a session from default lists (`archived: true`) or shows it again. */
  async setArchived(id: string, archived: boolean): Promise<void> {
    await this.appendFact(id, 'session/archived', { archived })
  }

  /**
   * Deletes a stored session with its subagent children (their logs, attachments, checkpoints, spilled output
   * and search index entries); returns the ids deleted, the session first. A fork is not a child: it keeps
   * its own copies (hard links) of what it shares. Refused while one of them runs here or another process
   * holds it.
   */
  async delete(id: string): Promise<string[]> {
    return deleteSession(this.ctx, id)
  }

  /**
   * Writes the session with its subagent children (logs, attachments, checkpoints, spilled output) to `file`,
   * a new .tar.gz; `importArchive` of another home unpacks it.
   */
  async exportArchive(id: string, file: string): Promise<Manifest> {
    return exportSession(this.ctx, id, file)
  }

  /**
   * Unpacks an export into this home. Refused as a whole for an entry that is not a plain file or folder at a
   * session path, an archive past `maxArchiveBytes` / `maxUnpackedBytes` / `maxEntries`, a session id already
   * stored here, or a log that does not load (named `archive:sessions/<id>/session.jsonl:<line>`).
   */
  async importArchive(file: string): Promise<Manifest> {
    return importSessions(this.ctx, file, this.config)
  }

  /**
   * Appends one of this plugin's facts: to the live session when this process has it open, else to the stored
   * log under its lease (refused, by name, while another process holds it; a damaged log is refused too).
   */
  private async appendFact<K extends (typeof KINDS)[number]>(
    id: string,
    type: K,
    data: SessionEventMap[K],
  ): Promise<void> {
    const live = this.ctx.sessions.get(id)
    if (live) {
      live.append(type, data)
      await live.flush()
      return
    }
    await this.ctx.sessions.read(id) // every stored event checked first: nothing is appended to a damaged log
    const storage = this.ctx.sessionPersistence
    const log = await storage.acquire(id)
    try {
      const event: SessionEvent<K> = { type, seq: log.events.length, time: Date.now(), data, ignorable: true }
      storage.append(id, event as SessionEvent<EventKind> as SessionEvent)
      await storage.flush(id)
    } finally {
      await storage.release(id)
    }
  }

  private async titleAfterFirstTurn(agent: Agent, result: TurnResult): Promise<void> {
    const session = agent.session
    if (
      !this.ctx.settings.get('sessions.autoTitle') ||
      result.reason !== 'completed' ||
      !isFirstTurnOfTopSession(session)
    )
      return
    const first = session.events.find(
      (event) => event.type === 'user/message' && (event.data as SessionEventMap['user/message']).source === 'user',
    )
    const prompt = first
      ? shorten(promptText((first.data as SessionEventMap['user/message']).content), this.config.promptChars)
      : ''
    const route = this.config.route ?? routeInForce(session)
    if (!prompt || !route) return
    await requestTitle(
      this.ctx,
      session,
      { route, system: this.config.instruction, prompt, maxOutputTokens: this.config.maxOutputTokens },
      this.config,
    )
  }
}

/** A session's first turn, not a subagent's child and not yet named or asked about. */
function isFirstTurnOfTopSession(session: Session): boolean {
  let turns = 0
  for (const event of session.events) {
    if (event.type === 'turn/start') turns++
    else if (['subagent/parent', 'title/request', 'session/title'].includes(event.type)) return false
  }
  return turns === 1
}

/** The route the session's last request was sent to, else its logged route. */
function routeInForce(session: Session): Route | undefined {
  const context = session.last('request/context')
  if (context) return { provider: context.data.provider, model: context.data.model }
  const route = session.last('model/route')?.data.route
  return route ? { provider: route.provider, model: route.model } : undefined
}

export default SessionAdmin
