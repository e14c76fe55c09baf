// Recording: before the first effect on a file in a turn its prior content is stored and logged
// (`checkpoint/before`), and after every call what it left (`checkpoint/after`). Editing tools name their
// file; a command's changes are found by comparing git snapshots of the workspace around it.
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import { coveringRule } from '@dsh/sandbox-rules'
import type { Session } from '@dsh/session'
import { pathOf } from '@dsh/session-view'
import type { ToolInvocation } from '@dsh/tools'
import type { FileState } from './events.ts'
import { fileHistories, turnStarts } from './fold.ts'
import { existsSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import { dirname } from 'node:path'
import {
  blobSize,
  changedFiles,
  gitWorkspace,
  readBlob,
  Snapshots,
  type GitOptions,
  type TreeChange,
  type Workspace,
} from './git.ts'
import { Manifest, manifestChanges, type ManifestEntry } from './manifest.ts'
import { BlobStore } from './store.ts'

export interface RecordConfig {
  maxFileBytes: number
  fileTools: string[]
  shellTools: string[]
  gitSnapshots: boolean
  gitTimeoutMs: number
  racyWindowMs: number
  maxSnapshotSessions: number
  maxGitFiles: number
  folderSnapshots: boolean
  maxSnapshotFiles: number
  maxSnapshotBytes: number
  snapshotSkipDirs: string[]
}

/** What `prepare` found before the call ran, for `finish` after it. */
export type Plan =
  | { kind: 'files'; paths: string[] }
  | { kind: 'git'; snapshots: Snapshots; workspace: Workspace; tree: string }
  | { kind: 'folder'; manifest: Manifest; before: Map<string, ManifestEntry> }
  | { kind: 'none' }

export const within = (root: string, path: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)

/** Whether a `.git` is in `dir` or a folder above it (a repository may have been made since the last look). */
function gitAbove(dir: string): boolean {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return true
    if (dirname(at) === at) return false
  }
}

export class Recorder {
  /** Per session: its workspace's repository (found once; looked for again only once a `.git` appears) and snapshots. */
  private readonly workspaces = new Map<string, { cwd: string; snapshots?: Snapshots; manifest?: Manifest }>()

  constructor(
    private readonly ctx: Context,
    private readonly config: RecordConfig,
    private readonly storeOf: (session: Session) => BlobStore,
    /** Folders a manifest never walks (dsh's own home and sessions folder, when inside a workspace). */
    private readonly ownFolders: string[] = [],
  ) {}

  async prepare(invocation: ToolInvocation): Promise<Plan> {
    const { session } = invocation.context
    if (this.config.fileTools.includes(invocation.name)) return this.prepareFile(invocation, session)
    if (this.config.shellTools.includes(invocation.name)) return this.prepareGit(invocation, session)
    return { kind: 'none' }
  }

  async finish(invocation: ToolInvocation, plan: Plan): Promise<void> {
    const { session, callId } = invocation.context
    if (plan.kind === 'files') {
      const authority = await this.ctx.sandboxPolicy.authority(session)
      const root = await this.ctx.fs.realpath(session.cwd)
      for (const path of plan.paths)
        session.append('checkpoint/after', {
          callId,
          path,
          state: await this.diskState(resolve(root, path), authority, this.storeOf(session)),
        })
    } else if (plan.kind === 'git') {
      await this.finishGit(invocation, session, plan)
    } else if (plan.kind === 'folder') {
      await this.finishFolder(invocation, session, plan)
    }
  }

  private async prepareFile(invocation: ToolInvocation, session: Session): Promise<Plan> {
    const args = invocation.arguments as Record<string, unknown> | undefined
    const named = pathOf(args)
    if (!named || args?.command === 'view') return { kind: 'none' }
    const root = await this.ctx.fs.realpath(session.cwd)
    const real = await this.ctx.fs.realpath(isAbsolute(named) ? named : resolve(invocation.context.cwd, named))
    // Rewind restores only inside the workspace: a file elsewhere (an approved write) is not checkpointed.
    if (real === root || !within(root, real)) return { kind: 'none' }
    const path = relative(root, real).split(sep).join('/')
    if (!this.touchedThisTurn(session, path)) {
      const state = await this.diskState(real, await this.ctx.sandboxPolicy.authority(session), this.storeOf(session))
      session.append('checkpoint/before', {
        callId: invocation.callId,
        turn: currentTurn(session),
        path,
        state,
        via: 'tool',
      })
      await session.flush()
    }
    return { kind: 'files', paths: [path] }
  }

  /** The session's snapshots, or undefined outside a repository. */
  private async snapshotsOf(session: Session): Promise<Snapshots | undefined> {
    const known = this.workspaces.get(session.id)
    if (known && known.cwd === session.cwd && (known.snapshots || !gitAbove(session.cwd))) {
      this.workspaces.delete(session.id) // most recently used last
      this.workspaces.set(session.id, known)
      return known.snapshots
    }
    await known?.snapshots?.dispose()
    await known?.manifest?.dispose()
    const workspace = await gitWorkspace(session.cwd, { timeoutMs: this.config.gitTimeoutMs })
    const snapshots = workspace
      ? new Snapshots(workspace, { timeoutMs: this.config.gitTimeoutMs, racyWindowMs: this.config.racyWindowMs })
      : undefined
    this.workspaces.delete(session.id)
    this.workspaces.set(session.id, { cwd: session.cwd, ...(snapshots ? { snapshots } : {}) })
    // The longest-unused sessions' private indexes go first (a web host runs many sessions in one process).
    for (const [id, entry] of this.workspaces) {
      if (this.workspaces.size <= this.config.maxSnapshotSessions) break
      this.workspaces.delete(id)
      await entry.snapshots?.dispose()
      await entry.manifest?.dispose()
    }
    return snapshots
  }

  /** Outside git: the session's manifest of its workspace folder (made on first use, kept with its state). */
  private async manifestOf(session: Session): Promise<Manifest> {
    const entry = this.workspaces.get(session.id)!
    if (entry.manifest) return entry.manifest
    const root = await this.ctx.fs.realpath(session.cwd)
    const pool = new BlobStore(join(dirname(this.storeOf(session).dir), 'snapshot-pool'))
    return (entry.manifest = new Manifest(
      root,
      pool,
      {
        racyWindowMs: this.config.racyWindowMs,
        maxFileBytes: this.config.maxFileBytes,
        maxFiles: this.config.maxSnapshotFiles,
        maxBytes: this.config.maxSnapshotBytes,
        skipDirs: this.config.snapshotSkipDirs,
      },
      await Promise.all(this.ownFolders.map((dir) => realpath(dir).catch(() => dir))),
    ))
  }

  /** Removes every session's private index. */
  async dispose(): Promise<void> {
    const all = [...this.workspaces.values()]
    this.workspaces.clear()
    await Promise.all(all.flatMap((entry) => [entry.snapshots?.dispose(), entry.manifest?.dispose()]))
  }

  private async prepareGit(invocation: ToolInvocation, session: Session): Promise<Plan> {
    const snapshots = await this.snapshotsOf(session)
    if (snapshots && !this.config.gitSnapshots) return this.uncovered(invocation, session, 'git snapshots are off')
    if (!snapshots) {
      if (!this.config.folderSnapshots)
        return this.uncovered(invocation, session, 'the workspace is not a git repository and folder snapshots are off')
      const manifest = await this.manifestOf(session)
      const before = await manifest.scan(() => this.hashable(session))
      if ('overflow' in before)
        return this.uncovered(
          invocation,
          session,
          `the workspace has more than maxSnapshotFiles (${this.config.maxSnapshotFiles}) files or maxSnapshotBytes (${this.config.maxSnapshotBytes}) bytes outside the skipped folders`,
        )
      return { kind: 'folder', manifest, before: before.files }
    }
    return {
      kind: 'git',
      snapshots,
      workspace: snapshots.workspace,
      tree: await snapshots.tree(() => this.hashable(session)),
    }
  }

  private uncovered(invocation: ToolInvocation, session: Session, why: string): Plan {
    session.append('checkpoint/uncovered', {
      callId: invocation.callId,
      turn: currentTurn(session),
      reason: `${why}: files changed by commands are not listed or rewound`,
    })
    return { kind: 'none' }
  }

  /** Outside git: the manifests before and after give the changed files; their contents are in the pool. */
  private async finishFolder(
    invocation: ToolInvocation,
    session: Session,
    plan: Extract<Plan, { kind: 'folder' }>,
  ): Promise<void> {
    const { callId } = invocation.context
    const after = await plan.manifest.scan(() => this.hashable(session))
    if ('overflow' in after) {
      session.append('checkpoint/uncovered', {
        callId,
        turn: currentTurn(session),
        reason: `a command left more than maxSnapshotFiles (${this.config.maxSnapshotFiles}) files or maxSnapshotBytes (${this.config.maxSnapshotBytes}) bytes in the workspace: files changed by commands are not listed or rewound`,
      })
      return
    }
    const changes = manifestChanges(plan.before, after.files)
    if (!changes.length) return
    if (this.tooManyChanges(session, callId, changes.length)) return
    const store = this.storeOf(session)
    const kept = async (state: FileState): Promise<FileState> =>
      'sha256' in state && !(await store.take(plan.manifest.pool, state.sha256)) ? { unrecorded: 'unreadable' } : state
    for (const change of changes) {
      if (!this.touchedThisTurn(session, change.path))
        session.append('checkpoint/before', {
          callId,
          turn: currentTurn(session),
          path: change.path,
          state: await kept(change.before),
          via: 'snapshot',
        })
      session.append('checkpoint/after', { callId, path: change.path, state: await kept(change.after) })
    }
  }

  /** A command that changed more than maxGitFiles files is logged as not covered (both kinds of workspace). */
  private tooManyChanges(session: Session, callId: string, count: number): boolean {
    if (count <= this.config.maxGitFiles) return false
    session.append('checkpoint/uncovered', {
      callId,
      turn: currentTurn(session),
      reason: `a command changed ${count} files, more than maxGitFiles (${this.config.maxGitFiles}): they are not listed or rewound`,
    })
    return true
  }

  private async finishGit(
    invocation: ToolInvocation,
    session: Session,
    plan: Extract<Plan, { kind: 'git' }>,
  ): Promise<void> {
    const options: GitOptions = { timeoutMs: this.config.gitTimeoutMs }
    const after = await plan.snapshots.tree(() => this.hashable(session))
    if (after === plan.tree) return // nothing changed: no git, no authority to look at
    const changes = await changedFiles(plan.workspace, plan.tree, after, options)
    const { callId } = invocation.context
    if (this.tooManyChanges(session, callId, changes.length)) return
    const authority = await this.ctx.sandboxPolicy.authority(session)
    const root = await this.ctx.fs.realpath(session.cwd)
    for (const change of changes) {
      const secret = coveringRule(authority.paths?.denyRead, resolve(root, change.path))
      const blobState = async (side: TreeChange['before']): Promise<FileState> =>
        secret
          ? { unrecorded: 'secret' }
          : side
            ? this.blobState(plan.workspace, side, options, session)
            : { absent: true }
      if (!this.touchedThisTurn(session, change.path))
        session.append('checkpoint/before', {
          callId,
          turn: currentTurn(session),
          path: change.path,
          state: await blobState(change.before),
          via: 'git',
        })
      session.append('checkpoint/after', { callId, path: change.path, state: await blobState(change.after) })
    }
  }

  /** Paths a snapshot may hash: none that the session's authority hides from reads. */
  private async hashable(session: Session): Promise<(path: string) => boolean> {
    const { paths } = await this.ctx.sandboxPolicy.authority(session)
    return (path) => !coveringRule(paths?.denyRead, path)
  }

  private async blobState(
    workspace: Workspace,
    side: { blob: string; mode: string },
    options: GitOptions,
    session: Session,
  ): Promise<FileState> {
    if (!side.mode.startsWith('100')) return { unrecorded: 'not-a-file' } // a link or a submodule
    const bytes = await blobSize(workspace, side.blob, options)
    if (bytes > this.config.maxFileBytes) return { unrecorded: 'too-large' }
    const data = await readBlob(workspace, side.blob, options)
    return { sha256: await this.storeOf(session).put(data), bytes: data.byteLength }
  }

  /** The file as it is now, read under the session's authority (a secret path is refused, never stored). */
  async diskState(path: string, authority: SandboxAuthority, store: BlobStore): Promise<FileState> {
    try {
      const data = await this.ctx.fs.readBytes(path, { authority, maxBytes: this.config.maxFileBytes })
      return { sha256: await store.put(data), bytes: data.byteLength }
    } catch (error) {
      if (!(error instanceof FsError)) throw error
      if (error.code === 'FS_NOT_FOUND') return { absent: true }
      if (error.code === 'FS_READ_DENIED') return { unrecorded: 'secret' }
      if (error.code === 'FS_TOO_LARGE') return { unrecorded: 'too-large' }
      if (error.code === 'FS_IS_DIRECTORY' || error.code === 'FS_NOT_A_FILE') return { unrecorded: 'not-a-file' }
      return { unrecorded: 'unreadable' }
    }
  }

  private touchedThisTurn(session: Session, path: string): boolean {
    const turn = currentTurn(session)
    return !!fileHistories(session.events)
      .get(path)
      ?.befores.some((before) => before.turn === turn)
  }
}

/** The turn running now (1-based): the number of `turn/start`s so far. */
export const currentTurn = (session: Session) => Math.max(1, turnStarts(session.events).length)
