import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/checkpoints'
import type {} from '@dsh/session'
import { sessionChanges, type ChangesConfig, type SessionChanges } from './changes.ts'

declare module '@dsh/cordis' {
  interface Context {
    sessionChanges: SessionChangesService
  }
}

export class ChangesError extends Error {
  override name = 'ChangesError'
  readonly code = 'CHANGES_OUT_OF_RANGE'
}

export type Config = ChangesConfig

/**
 * The review of a session (docs/architecture.md, "Review and rewind"). Owns: the changed files of a session
 * and their diffs against the state before the session or a turn, read from the log and the checkpoint
 * store (a stored session need not be open). Must not own: recording or restoring (ctx.checkpoints).
 */
export class SessionChangesService extends Service {
  static inject = ['sessions', 'checkpoints']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    maxDiffBytes: Schema.natural()
      .default(1024 * 1024)
      .description('A side larger than this is listed with its size, not diffed.'),
    contextLines: Schema.natural().default(3).description('Unchanged lines shown around each change in a diff.'),
  })

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx, 'sessionChanges')
  }

  /** The session's changed files against the state before turn `fromTurn` (default 1: before the session). */
  async changes(sessionId: string, options: { fromTurn?: number } = {}): Promise<SessionChanges> {
    const { header, events } = await this.ctx.sessions.read(sessionId)
    const fromTurn = options.fromTurn ?? 1
    const turns = events.filter((event) => event.type === 'turn/start').length
    if (!Number.isInteger(fromTurn) || fromTurn < 1 || (fromTurn > turns && turns > 0)) {
      throw new ChangesError(`session ${sessionId} has turns 1..${turns}; there is no turn ${fromTurn} to compare from`)
    }
    return sessionChanges(sessionId, events, this.ctx.checkpoints.store(header), fromTurn, this.config)
  }
}
