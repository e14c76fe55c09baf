import { join } from 'node:path'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/commands'
import type {} from '@dsh/sandbox-policy'
import { cwdKey } from '@dsh/session-persistence'
import type { Session, SessionHeader } from '@dsh/session'
import type {} from '@dsh/tools'
import { CHECKPOINT_KINDS, type RewindDone } from './events.ts'
import { Recorder, type Plan, type RecordConfig } from './record.ts'
import { rewindFiles, type RewindOptions, type RewindPreview } from './rewind.ts'
import { BlobStore } from './store.ts'

declare module '@dsh/cordis' {
  interface Context {
    checkpoints: Checkpoints
  }
}

export interface Config extends RecordConfig {
  dir?: string
}

/**
 * Checkpoints and rewind (docs/architecture.md, "Review and rewind"). Owns: the `checkpoint/*` and
 * `rewind/done` kinds, the content store beside each log (`<sessions>/<cwd-key>/<id>/checkpoints/<sha256>`),
 * recording around every editing and command call (`tools/execute`), and restoring files. Must not own:
 * whether a call may run (it only sees calls the pipeline dispatched), what the model is told, or diffs
 * (session-changes).
 */
export class Checkpoints extends Service {
  static inject = ['app', 'sessions', 'fs', 'sandboxPolicy']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    dir: Schema.string().description(
      'The sessions folder the checkpoints live beside (default: $DSH_HOME/sessions; keep it equal to the session persistence `dir`).',
    ),
    maxFileBytes: Schema.natural()
      .default(4 * 1024 * 1024)
      .description(
        'Largest file whose prior content is stored; a larger one is listed as not recorded and rewind leaves it.',
      ),
    fileTools: Schema.array(Schema.string())
      .default(['write', 'edit', 'str_replace_editor'])
      .description('Tools whose path argument names the one file they change.'),
    shellTools: Schema.array(Schema.string())
      .default(['bash'])
      .description('Tools whose changes are found by a git snapshot of the workspace before and after the call.'),
    gitSnapshots: Schema.boolean()
      .default(true)
      .description(
        'Compare git snapshots around commands (a private index; the user index, stash and refs are untouched).',
      ),
    gitTimeoutMs: Schema.natural().default(20_000).description('Longest one git step of a snapshot may take.'),
    racyWindowMs: Schema.natural()
      .default(1_000)
      .description(
        'A file or folder changed this recently when a snapshot is taken is looked at again by the next one (a second write within one clock tick can leave its stat equal); older ones unchanged since are not re-read.',
      ),
    maxSnapshotSessions: Schema.natural()
      .min(1)
      .default(16)
      .description(
        "Sessions whose snapshot state (a private index, the files' stats) is kept; the longest unused is dropped first and its next snapshot starts over.",
      ),
    maxGitFiles: Schema.natural()
      .default(500)
      .description(
        'A command changing more files than this (in git or a folder snapshot) is noted as not covered instead of checkpointed.',
      ),
    folderSnapshots: Schema.boolean()
      .default(true)
      .description(
        "Outside git, compare manifests of the workspace folder around commands (each file's stat and sha256; contents kept in a pool beside the log while the session is open).",
      ),
    maxSnapshotFiles: Schema.natural()
      .default(10_000)
      .description(
        'A workspace folder (outside git) holding more files than this, skipped folders aside, is not snapshotted: its commands are noted as not covered.',
      ),
    maxSnapshotBytes: Schema.natural()
      .default(128 * 1024 * 1024)
      .description(
        'A workspace folder (outside git) whose files up to maxFileBytes hold more bytes than this in all is not snapshotted: its commands are noted as not covered.',
      ),
    snapshotSkipDirs: Schema.array(Schema.string())
      .default(['.git', 'node_modules', '.venv', 'venv', '__pycache__', '.cache'])
      .description(
        'Folder names a folder snapshot never walks, at any depth (files changed in them by commands are not covered).',
      ),
  })

  private readonly root: string
  private readonly recorder: Recorder

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx, 'checkpoints')
    this.root = config.dir ?? join(ctx.app.home, 'sessions')
    for (const [kind, spec] of Object.entries(CHECKPOINT_KINDS))
      ctx.sessions.defineKind(ctx, kind, { ignorable: true, ...spec })
    this.recorder = new Recorder(ctx, config, (session) => this.store(session.header), [ctx.app.home, this.root])
    ctx.effect(() => () => this.recorder.dispose(), 'remove the private snapshot indexes')
    ctx.on('tools/execute', async (invocation, next) => {
      const plan: Plan = await this.recorder.prepare(invocation).catch((error) => {
        ctx
          .logger('checkpoints')
          .warn('call %s: no checkpoint: %s', invocation.callId, error instanceof Error ? error.message : error)
        return { kind: 'none' } as const
      })
      try {
        return await next()
      } finally {
        await this.recorder
          .finish(invocation, plan)
          .catch((error) =>
            ctx
              .logger('checkpoints')
              .warn(
                'call %s: after-state not recorded: %s',
                invocation.callId,
                error instanceof Error ? error.message : error,
              ),
          )
      }
    })
    ctx.inject(['commands'], (inner) => {
      inner.commands.register(inner, {
        name: 'rewind',
        description:
          'Restore the files this session touched to their state before turn N: /rewind N (add --force to overwrite files changed since, --preview to see what it would do).',
        run: (args, { agent }) => this.command(agent, args),
      })
    })
    ctx.on('session/opened', (session, how) => {
      const parent = session.header.parent
      if (how === 'forked' && parent)
        // Not awaited (the fork's open does not wait for copies), so never an unhandled rejection: a fork whose
        // blobs could not all be given says so, and a rewind past them then names the missing checkpoint.
        void this.store(session.header)
          .adopt(this.store({ id: parent.id, cwd: session.cwd }))
          .catch((error: unknown) =>
            ctx
              .logger('checkpoints')
              .warn(
                "the fork %s did not get all of its parent's checkpoints: %s",
                session.id,
                (error as Error)?.message ?? error,
              ),
          )
    })
  }

  private async command(agent: Agent, args: string): Promise<string> {
    const match = /^(\d+)(\s+--force)?(\s+--preview)?$/.exec(args)
    if (!match)
      throw Object.assign(
        new Error('usage: /rewind N [--force] [--preview] (N: the turn whose state before it the files go back to)'),
        { code: 'BAD_ARGS' },
      )
    if (match[3]) {
      const preview = await this.previewRewind(agent.session, {
        toTurn: Number(match[1]),
        force: !!match[2],
        actor: 'user:slash-command',
      })
      const lines = [
        `Would restore ${preview.restored.length} file${preview.restored.length === 1 ? '' : 's'} to before turn ${preview.toTurn} (nothing written yet):`,
        ...preview.restored.map((entry) => `  ${'absent' in entry.state ? 'remove' : 'restore'} ${entry.path}`),
      ]
      for (const entry of preview.conflicts) lines.push(`Would leave: ${entry.path} (${entry.reason}).`)
      for (const entry of preview.skipped) lines.push(`Would skip: ${entry.path} (${entry.reason}).`)
      return lines.join('\n')
    }
    const done = await this.rewind(agent.session, {
      toTurn: Number(match[1]),
      force: !!match[2],
      actor: 'user:slash-command',
    })
    const lines = [
      `Restored ${done.restored.length} file${done.restored.length === 1 ? '' : 's'} to before turn ${done.toTurn}.`,
    ]
    for (const entry of done.conflicts)
      lines.push(`Not overwritten: ${entry.path} (${entry.reason}); /rewind ${done.toTurn} --force overwrites it.`)
    for (const entry of done.skipped) lines.push(`Skipped: ${entry.path} (${entry.reason}).`)
    return lines.join('\n')
  }

  /** The content store of a session (by its header: stored sessions need not be open). */
  store(header: Pick<SessionHeader, 'id' | 'cwd'>): BlobStore {
    return new BlobStore(join(this.root, cwdKey(header.cwd), header.id, 'checkpoints'))
  }

  /** What `rewind` would do now (the same checks, nothing written, nothing logged). */
  async previewRewind(session: Session, options: Omit<RewindOptions, 'fork'>): Promise<RewindPreview> {
    const { forkAt: _none, ...outcome } = await rewindFiles(
      this.ctx,
      session,
      { ...options, preview: true },
      { recorder: this.recorder, store: this.store(session.header) },
    )
    return outcome
  }

  /**
   * Restores the files the session touched to their state before turn `toTurn` and logs `rewind/done`
   * (with the fork's id when asked). The session must be open for writing (live, or resumed).
   */
  async rewind(session: Session, options: RewindOptions): Promise<RewindDone> {
    const store = this.store(session.header)
    const { forkAt, ...outcome } = await rewindFiles(this.ctx, session, options, { recorder: this.recorder, store })
    const forked = forkAt !== undefined ? await this.ctx.sessions.fork(session.id, forkAt) : undefined
    const done: RewindDone = { ...outcome, actor: options.actor, ...(forked ? { forkedTo: forked.id } : {}) }
    session.append('rewind/done', done)
    await session.flush()
    if (forked) await this.store(forked.header).adopt(store)
    return done
  }
}
