// Snapshots of a workspace that is not a git repository (docs/architecture.md, "Review and rewind"): a
// manifest of its files (path → stat, and sha256 of the bytes) walked around each command, never following a
// link. The content of each file is kept by sha256 in a pool beside the session's log, so when a command
// changes or removes a file its prior bytes are there to checkpoint; only what changed moves into the
// session's checkpoint store, and the pool is removed with the session's snapshot state.
//
// Cheap per step: a file whose stat is what it was when last read is not read again (a stat within
// `racyWindowMs` of the walk is not trusted, so it is read again next time); folders named in `skipDirs` are
// not walked; a workspace with more than `maxFiles` files or `maxBytes` of kept contents is not covered (the
// caller says so). The walk is
// synchronous, like the git snapshot's: thousands of small stats cost less without a thread-pool round trip each.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  readlinkSync,
  type BigIntStats,
  type Dirent,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileState } from './events.ts'
import type { BlobStore } from './store.ts'

export interface ManifestOptions {
  racyWindowMs: number
  /** Largest file whose bytes are kept; a larger one is fingerprinted by its stat only (`too-large`). */
  maxFileBytes: number
  maxFiles: number
  /** The most bytes of file contents one walk keeps (the sum of the kept files' sizes); more overflows it. */
  maxBytes: number
  /** Folder names never walked (at any depth). */
  skipDirs: string[]
}

/** A file as one walk saw it: its recorded state and what tells a change (its sha256, else its stat or link). */
export interface ManifestEntry {
  state: FileState
  fingerprint: string
}

export type ManifestScan = { files: Map<string, ManifestEntry> } | { overflow: true }

interface Kept extends ManifestEntry {
  /** The stat it was read at; undefined when that stat is too recent to show a later change. */
  key?: string
}

const statKey = (stat: BigIntStats) => `${stat.mode}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`

export class Manifest {
  private readonly kept = new Map<string, Kept>()

  constructor(
    /** The workspace folder (a real path). */
    readonly root: string,
    /** Where every kept file's bytes are, by sha256; the session's checkpoints take theirs from here. */
    readonly pool: BlobStore,
    private readonly options: ManifestOptions,
    /** Folders never walked wherever they are (the sessions folder when it is inside the workspace). */
    private readonly skipPaths: string[] = [],
  ) {}

  /**
   * The workspace's files now. `hashable` (which costs a look at the session's authority) is asked for only
   * when a file is not unchanged since it was read, and says which may be read: a secret path is
   * fingerprinted by its stat.
   */
  async scan(hashable: () => Promise<(path: string) => boolean>): Promise<ManifestScan> {
    const since = Date.now() - this.options.racyWindowMs
    const racy = (stat: BigIntStats) =>
      Number(stat.mtimeNs / 1_000_000n) >= since || Number(stat.ctimeNs / 1_000_000n) >= since
    const skip = new Set(this.options.skipDirs)
    const files = new Map<string, ManifestEntry>()
    const toRead: { path: string; full: string; stat: BigIntStats }[] = []
    const pending: string[] = ['']
    let count = 0
    while (pending.length) {
      const dir = pending.pop()!
      let entries: Dirent[]
      try {
        entries = readdirSync(join(this.root, dir), { withFileTypes: true })
      } catch {
        continue // gone or unreadable since it was listed: its files are not seen (as if removed)
      }
      for (const entry of entries) {
        const path = dir ? `${dir}/${entry.name}` : entry.name
        const full = join(this.root, path)
        if (entry.isDirectory()) {
          if (!skip.has(entry.name) && !this.skipPaths.includes(full)) pending.push(path)
          continue
        }
        if (!entry.isFile() && !entry.isSymbolicLink()) continue // a socket or a fifo: nothing to restore
        if (++count > this.options.maxFiles) return { overflow: true }
        let stat: BigIntStats
        try {
          stat = lstatSync(full, { bigint: true })
        } catch {
          continue // gone since the listing
        }
        const known = this.kept.get(path)
        if (known?.key && known.key === statKey(stat)) files.set(path, known)
        else if (stat.isSymbolicLink()) files.set(path, this.link(path, full, stat, racy))
        else if (stat.isFile()) toRead.push({ path, full, stat })
      }
    }
    let bytes = 0
    const over = (entry: ManifestEntry) =>
      'bytes' in entry.state && (bytes += entry.state.bytes) > this.options.maxBytes
    for (const entry of files.values()) if (over(entry)) return { overflow: true }
    if (toRead.length) {
      const readable = await hashable()
      for (const { path, full, stat } of toRead) {
        // Counted before it is read: a workspace too big to keep is never copied whole into the pool.
        if (stat.size <= BigInt(this.options.maxFileBytes) && bytes + Number(stat.size) > this.options.maxBytes)
          return { overflow: true }
        const seen = this.read(path, full, stat, readable(full), racy)
        if (!seen) continue
        files.set(path, seen)
        if (over(seen)) return { overflow: true }
      }
    }
    for (const path of this.kept.keys()) if (!files.has(path)) this.kept.delete(path)
    return { files }
  }

  private keep(path: string, entry: ManifestEntry, stat: BigIntStats, trusted: boolean): ManifestEntry {
    this.kept.set(path, trusted ? { ...entry, key: statKey(stat) } : entry)
    return entry
  }

  /** Never followed: a link is told by its target text, and rewind leaves a link where it finds one. */
  private link(path: string, full: string, stat: BigIntStats, racy: (stat: BigIntStats) => boolean): ManifestEntry {
    let target = ''
    try {
      target = readlinkSync(full)
    } catch {
      // gone since: the next walk will not list it
    }
    return this.keep(path, { state: { unrecorded: 'not-a-file' }, fingerprint: `link:${target}` }, stat, !racy(stat))
  }

  private read(
    path: string,
    full: string,
    stat: BigIntStats,
    readable: boolean,
    racy: (stat: BigIntStats) => boolean,
  ): ManifestEntry | undefined {
    const byStat = (unrecorded: 'secret' | 'too-large' | 'unreadable', at = stat) =>
      this.keep(path, { state: { unrecorded }, fingerprint: `stat:${statKey(at)}` }, at, false)
    if (!readable) return byStat('secret')
    if (stat.size > BigInt(this.options.maxFileBytes)) return byStat('too-large')
    let fd: number
    try {
      fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ELOOP') return undefined // gone, or a link since the listing
      return byStat('unreadable')
    }
    try {
      const before = fstatSync(fd, { bigint: true })
      if (!before.isFile()) return undefined
      // One byte past what the stat said (and never past the limit): a file that grew meanwhile is not read whole.
      const room = Math.min(Number(before.size), this.options.maxFileBytes) + 1
      const buffer = Buffer.allocUnsafe(room)
      let filled = 0
      for (let got = 1; got > 0 && filled < room; filled += got) got = readSync(fd, buffer, filled, room - filled, null)
      const after = fstatSync(fd, { bigint: true })
      // Grown while read: over the limit it is too large; otherwise it is read again by the next walk.
      if (filled === room) return byStat(filled > this.options.maxFileBytes ? 'too-large' : 'unreadable', after)
      const data = buffer.subarray(0, filled)
      const sha256 = this.pool.putSync(data)
      return this.keep(
        path,
        { state: { sha256, bytes: data.byteLength }, fingerprint: `sha256:${sha256}` },
        after,
        statKey(after) === statKey(before) && !racy(after),
      )
    } finally {
      closeSync(fd)
    }
  }

  /** Removes the pool (the checkpoints taken from it are in the session's store). */
  async dispose(): Promise<void> {
    this.kept.clear()
    await rm(this.pool.dir, { recursive: true, force: true })
  }
}

export interface ManifestChange {
  path: string
  before: FileState
  after: FileState
}

/** The files whose fingerprint differs between two scans (made, changed, removed). */
export function manifestChanges(
  before: Map<string, ManifestEntry>,
  after: Map<string, ManifestEntry>,
): ManifestChange[] {
  const changes: ManifestChange[] = []
  for (const [path, was] of before) {
    const now = after.get(path)
    if (!now) changes.push({ path, before: was.state, after: { absent: true } })
    else if (now.fingerprint !== was.fingerprint) changes.push({ path, before: was.state, after: now.state })
  }
  for (const [path, now] of after)
    if (!before.has(path)) changes.push({ path, before: { absent: true }, after: now.state })
  return changes
}
