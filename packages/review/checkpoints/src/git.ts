// Snapshots of a git workspace that never touch the user's index, stash or refs (docs/architecture.md,
// "Review and rewind"): a private index per session (seeded from the user's), contents hashed raw by
// `git hash-object --no-filters` from copies dsh read itself (no filter, no symlink followed), entered with
// `update-index --index-info` (which reads no file) and `write-tree`. Only objects are written to the
// repository (unreachable, so git's gc removes them in time). Every git runs through @dsh/git-kit.
//
// Cheap per step (docs/performance.md, "Where a step goes"): the stat of every listed file and of every
// folder walked is kept; when none changed since the last snapshot, the tree is the last one and no git
// runs. A stat taken within `racyWindowMs` of a change is not trusted (a second write in the same clock tick
// leaves it equal), so the next snapshot looks again.
import { lstatSync, readdirSync, type BigIntStats } from 'node:fs'
import { copyFile, lstat, mkdtemp, open, readlink, rm, writeFile } from 'node:fs/promises'
import { constants } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { runGit } from '@dsh/git-kit'

export interface GitOptions {
  timeoutMs: number
}

export interface SnapshotOptions extends GitOptions {
  racyWindowMs: number
}

export interface Workspace {
  /** The repository's top level. */
  root: string
  /** The workspace folder relative to the top level ('' at the top). */
  prefix: string
  index: string
  /** The length of an object name in hex (40 for sha1, 64 for sha256). */
  hexLength: number
}

const git = (
  workspace: Pick<Workspace, 'root'>,
  args: string[],
  options: GitOptions,
  extra: { env?: Record<string, string>; input?: string | Buffer } = {},
) => runGit(args, { cwd: workspace.root, timeoutMs: options.timeoutMs, ...extra })

/** The repository the folder is in, if any. */
export async function gitWorkspace(cwd: string, options: GitOptions): Promise<Workspace | undefined> {
  try {
    const out = await runGit(
      ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-path', 'index', '--show-object-format'],
      { cwd, timeoutMs: options.timeoutMs },
    )
    const [root, index, format] = out.toString().trim().split('\n')
    return root && index
      ? { root, prefix: relative(root, cwd), index, hexLength: format === 'sha256' ? 64 : 40 }
      : undefined
  } catch {
    return undefined
  }
}

interface Entry {
  /** The stat it was hashed at; undefined when that stat cannot be trusted to show a later change. */
  key?: string
  mode: string
  blob: string
}

const statKey = (stat: BigIntStats) => `${stat.mode}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`
const lstatKey = (path: string) => {
  try {
    return statKey(lstatSync(path, { bigint: true }))
  } catch {
    return undefined
  }
}

/**
 * The snapshots of one session's workspace. `tree()` is the tree of the workspace folder's files as they are
 * now (tracked and untracked, ignored files left out). Only paths `hashable` accepts are hashed: a secret path
 * never becomes an object in the repository, where a confined command could read it back with `git cat-file`.
 */
export class Snapshots {
  private dir?: string
  private readonly files = new Map<string, Entry>()
  /** Each folder walked: its stat (undefined when too recent to trust) and the names it held. */
  private readonly dirs = new Map<string, { key?: string; names: string }>()
  private last?: string
  private trusted = false

  constructor(
    readonly workspace: Workspace,
    private readonly options: SnapshotOptions,
  ) {}

  /** `hashable` is asked for only when something changed (it costs a look at the session's authority). */
  async tree(hashable: () => Promise<(path: string) => boolean>): Promise<string> {
    if (this.last && this.unchanged()) return this.last
    return (this.last = await this.rescan(await hashable()))
  }

  /** Every file hashed and every folder walked has the stat it had: nothing was written since. */
  private unchanged(): boolean {
    if (!this.trusted) return false
    for (const [path, entry] of this.files) if (lstatKey(join(this.workspace.root, path)) !== entry.key) return false
    for (const [dir, seen] of this.dirs) if (lstatKey(dir) !== seen.key && !this.sameNames(dir, seen)) return false
    return true
  }

  /**
   * Whether a folder whose stat changed still holds the names it held: a sandboxed command's fences make and
   * remove empty mount points in the workspace root around every command (sandbox-local's fences.ts), which
   * changes the root's stat though nothing was written. Each file and folder below has its own stat checked,
   * so the same names mean the same snapshot. The new stat is kept only when it is old enough to trust.
   */
  private sameNames(dir: string, seen: { key?: string; names: string }): boolean {
    let stat: BigIntStats
    let names: string
    try {
      stat = lstatSync(dir, { bigint: true })
      names = readdirSync(dir).sort().join('\0')
    } catch {
      return false
    }
    if (names !== seen.names) return false
    const since = Date.now() - this.options.racyWindowMs
    const racy = Number(stat.mtimeNs / 1_000_000n) >= since || Number(stat.ctimeNs / 1_000_000n) >= since
    if (racy) delete seen.key
    else seen.key = statKey(stat)
    return true
  }

  private async rescan(hashable: (path: string) => boolean): Promise<string> {
    const { root, prefix } = this.workspace
    const dir = (this.dir ??= await mkdtemp(join(tmpdir(), 'dsh-checkpoint-index-')))
    const index = join(dir, 'index')
    if (!this.last) await copyFile(this.workspace.index, index).catch(() => undefined) // a repository without commits has none
    const env = { GIT_INDEX_FILE: index, GIT_LITERAL_PATHSPECS: '1' }
    const scope = prefix || '.'
    const listed = (
      await git(
        this.workspace,
        ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', scope],
        this.options,
        { env },
      )
    )
      .toString()
      .split('\0')
      .filter(Boolean)
    const ignored = (
      await git(
        this.workspace,
        ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--', scope],
        this.options,
        { env },
      )
    )
      .toString()
      .split('\0')
      .filter((path) => path.endsWith('/'))
    const since = Date.now() - this.options.racyWindowMs
    const racy = (stat: BigIntStats) =>
      Number(stat.mtimeNs / 1_000_000n) >= since || Number(stat.ctimeNs / 1_000_000n) >= since
    let trusted = true
    this.walk(
      join(root, prefix),
      new Set(
        [...ignored, ...listed.filter((path) => path.endsWith('/'))].map((path) => join(root, path.slice(0, -1))),
      ),
      racy,
    )

    const seen = new Set<string>()
    const removed: string[] = []
    const toHash: { path: string; stat: BigIntStats }[] = []
    for (const path of new Set(listed)) {
      if (path.endsWith('/') || !hashable(join(root, path))) continue
      const stat = await lstat(join(root, path), { bigint: true }).catch(() => undefined)
      if (!stat) {
        removed.push(path)
        continue
      }
      if (!stat.isFile() && !stat.isSymbolicLink()) continue // a submodule or a nested repository: its index entry stays
      seen.add(path)
      const known = this.files.get(path)
      if (known?.key && known.key === statKey(stat)) continue
      toHash.push({ path, stat })
    }
    for (const path of this.files.keys()) if (!seen.has(path)) this.files.delete(path)
    const hashed = await this.hash(dir, toHash, racy, removed)
    for (const item of hashed) {
      this.files.set(item.path, item.entry)
      if (!item.entry.key) trusted = false
    }
    const zero = '0'.repeat(this.workspace.hexLength)
    const lines = [
      ...hashed.map((item) => `${item.entry.mode} ${item.entry.blob}\t${item.path}`),
      ...removed.map((path) => `0 ${zero}\t${path}`),
    ]
    if (lines.length)
      await git(this.workspace, ['update-index', '-z', '--index-info'], this.options, {
        env,
        input: lines.join('\0') + '\0',
      })
    const tree =
      lines.length || !this.last
        ? (await git(this.workspace, ['write-tree'], this.options, { env })).toString().trim()
        : this.last
    this.trusted = trusted
    return tree
  }

  /** Records the stat of every folder under `from` but `.git` and the ignored or nested-repository ones. */
  private walk(from: string, skip: Set<string>, racy: (stat: BigIntStats) => boolean): void {
    this.dirs.clear()
    const pending = [from]
    while (pending.length) {
      const dir = pending.pop()!
      let stat: BigIntStats
      try {
        stat = lstatSync(dir, { bigint: true })
      } catch {
        continue
      }
      // A stat too recent to trust is kept as none: the folder's names are compared instead (sameNames), which
      // sees what its stat would (the fences' mount points change the root's stat just before each snapshot).
      let names: { name: string; isDirectory(): boolean }[]
      try {
        names = readdirSync(dir, { withFileTypes: true })
      } catch {
        continue
      }
      this.dirs.set(dir, {
        ...(racy(stat) ? {} : { key: statKey(stat) }),
        names: names
          .map((entry) => entry.name)
          .sort()
          .join('\0'),
      })
      for (const entry of names) {
        const path = dir + sep + entry.name
        if (entry.isDirectory() && entry.name !== '.git' && !skip.has(path)) pending.push(path)
      }
    }
  }

  /**
   * Hashes the raw bytes of each file (a symbolic link: its target text) as git objects. dsh reads each one
   * itself (never following a link, so a file swapped for a link to a secret is not read) into a private
   * copy, and `git hash-object --no-filters` hashes the copies: no filter or attribute of the repository
   * applies. A file gone meanwhile is removed instead.
   */
  private async hash(
    dir: string,
    items: { path: string; stat: BigIntStats }[],
    racy: (stat: BigIntStats) => boolean,
    removed: string[],
  ): Promise<{ path: string; entry: Entry }[]> {
    const copies: { path: string; copy: string; mode: string; key?: string }[] = []
    for (const [at, { path, stat }] of items.entries()) {
      const copy = join(dir, `blob-${at}`)
      const full = join(this.workspace.root, path)
      try {
        if (stat.isSymbolicLink()) {
          await writeFile(copy, await readlink(full, { encoding: 'buffer' }), { mode: 0o600 })
          const after = await lstat(full, { bigint: true })
          copies.push({
            path,
            copy,
            mode: '120000',
            ...(statKey(after) === statKey(stat) && !racy(stat) ? { key: statKey(stat) } : {}),
          })
          continue
        }
        const handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW)
        try {
          const before = await handle.stat({ bigint: true })
          if (!before.isFile()) continue
          await writeFile(copy, await handle.readFile(), { mode: 0o600 })
          const after = await handle.stat({ bigint: true })
          const key = statKey(after) === statKey(before) && !racy(after) ? statKey(after) : undefined
          copies.push({ path, copy, mode: before.mode & 0o100n ? '100755' : '100644', ...(key ? { key } : {}) })
        } finally {
          await handle.close()
        }
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ENOENT') removed.push(path)
        else if (code !== 'ELOOP') throw error // ELOOP: it became a link since the listing; left for the next snapshot
      }
    }
    if (!copies.length) return []
    const out = await git(this.workspace, ['hash-object', '-w', '--no-filters', '--stdin-paths'], this.options, {
      input: copies.map((item) => item.copy).join('\n') + '\n',
    })
    const blobs = out.toString().trim().split('\n')
    await Promise.all(copies.map((item) => rm(item.copy, { force: true })))
    if (blobs.length !== copies.length)
      throw new Error(`git hash-object returned ${blobs.length} object names for ${copies.length} files`)
    return copies.map((item, at) => ({
      path: item.path,
      entry: { mode: item.mode, blob: blobs[at]!, ...(item.key ? { key: item.key } : {}) },
    }))
  }

  /** Removes the private index and copies. */
  async dispose(): Promise<void> {
    if (this.dir) await rm(this.dir, { recursive: true, force: true })
    this.dir = undefined
  }
}

export interface TreeChange {
  /** Relative to the workspace folder. */
  path: string
  before?: { blob: string; mode: string }
  after?: { blob: string; mode: string }
}

const ZERO = /^0+$/

/** The files of the workspace folder that differ between two trees. */
export async function changedFiles(
  workspace: Workspace,
  before: string,
  after: string,
  options: GitOptions,
): Promise<TreeChange[]> {
  if (before === after) return []
  const out = (
    await git(
      workspace,
      [
        'diff-tree',
        '--no-ext-diff',
        '--no-textconv',
        '-r',
        '-z',
        '--no-renames',
        before,
        after,
        '--',
        workspace.prefix || '.',
      ],
      options,
    )
  ).toString()
  const fields = out.split('\0')
  const changes: TreeChange[] = []
  for (let at = 0; at + 1 < fields.length; at += 2) {
    const [oldMode, newMode, oldBlob, newBlob] = fields[at]!.replace(/^:/, '').split(' ')
    const path = relative(workspace.prefix, fields[at + 1]!)
    changes.push({
      path,
      ...(oldBlob && !ZERO.test(oldBlob) ? { before: { blob: oldBlob, mode: oldMode! } } : {}),
      ...(newBlob && !ZERO.test(newBlob) ? { after: { blob: newBlob, mode: newMode! } } : {}),
    })
  }
  return changes
}

export async function blobSize(workspace: Workspace, blob: string, options: GitOptions): Promise<number> {
  return Number((await git(workspace, ['cat-file', '-s', blob], options)).toString().trim())
}

/** The object's bytes as stored (`cat-file blob` applies no filter or textconv). */
export async function readBlob(workspace: Workspace, blob: string, options: GitOptions): Promise<Buffer> {
  return git(workspace, ['cat-file', 'blob', blob], options)
}
