import { renameSync, statSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { access, mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import {
  mapAtMost,
  SessionError,
  type SessionEvent,
  type SessionHeader,
  type SessionSummary,
  type StoredCheck,
  type StoredLog,
} from '@dsh/session'
import { cwdKey, SessionPersistence } from '@dsh/session-persistence'
import { dropLease, leaseIsLive, takeLease, type LeaseToken } from './lease.ts'
import { LineWriter, parseLog, truncateTornTail } from './jsonl.ts'
import { SUMMARY_FOLD_VERSION, SummaryFold } from './summary.ts'

export interface Config {
  dir?: string
  batchMs: number
  fsync: boolean
}

interface Open {
  /** The status meta.json was last written with. */
  metaStatus: string | undefined
  dir: string
  /** The token of the lease this process took: only that lease is dropped. */
  lease: LeaseToken
  writer: LineWriter
  summary: SummaryFold
  timer: NodeJS.Timeout | undefined
}

const LOG = 'session.jsonl'
const LEASE = 'lease'
const META = 'meta.json'
/** Session folders a listing reads at once (a log is folded only when its meta.json is missing or stale). */
const LIST_READS_AT_ONCE = 16
/** The header is line 1; event `seq` is on line `seq + 2`. */
const FIRST_EVENT_LINE = 2

/**
 * JSONL persistence: `<dir>/<cwd-key>/<id>/session.jsonl` (a header line, then one event per line), a
 * `lease` file for the single writer, and `meta.json` for fast listing (docs/architecture.md).
 */
export default class JsonlPersistence extends SessionPersistence {
  static override inject = ['sessions', 'app']
  static Config: Schema<Config> = Schema.object({
    dir: Schema.string().description('Where sessions are stored (default: $DSH_HOME/sessions).'),
    batchMs: Schema.natural()
      .default(25)
      .description('Longest a queued event waits before it is written when nobody flushes.'),
    fsync: Schema.boolean()
      .default(false)
      .description('fdatasync on every flush (survives power loss, not just a process crash; slower).'),
  })

  private readonly root: string
  private readonly open = new Map<string, Open>()
  private readonly located = new Map<string, string>()
  /** The fresh meta.json each idle session was last listed with: a report right after a listing reads it no second time. */
  private readonly listedMeta = new Map<string, StoredMeta>()

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    this.root = config.dir ?? join(ctx.app.home, 'sessions')
    ctx.effect(
      () => () => {
        for (const id of Array.from(this.open.keys())) this.closeOpen(id)
      },
      'release session leases',
    )
  }

  private async locate(id: string): Promise<string> {
    const known = this.located.get(id)
    if (known) return known
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new SessionError('SESSION_NOT_FOUND', `"${id}" is not a session id`)
    for (const key of await readdirOrEmpty(this.root)) {
      const dir = join(this.root, key, id)
      if (await exists(join(dir, LOG))) {
        this.located.set(id, dir)
        return dir
      }
    }
    throw new SessionError('SESSION_NOT_FOUND', `session ${id} not found under ${this.root}`)
  }

  async create(header: SessionHeader): Promise<void> {
    const dir = join(this.root, cwdKey(header.cwd), header.id)
    if (await exists(join(dir, LOG))) throw new SessionError('SESSION_EXISTS', `session ${header.id} already exists`)
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const lease = takeLease(join(dir, LEASE), header.id)
    try {
      await writeFile(join(dir, LOG), JSON.stringify(header) + '\n', { mode: 0o600, flag: 'wx' })
    } catch (error) {
      dropLease(join(dir, LEASE), lease)
      throw error
    }
    this.located.set(header.id, dir)
    this.track(header.id, dir, new SummaryFold(header), lease)
  }

  async acquire(id: string): Promise<StoredLog> {
    if (this.open.has(id)) throw new SessionError('SESSION_LOCKED', `session ${id} is already open in this process`)
    const dir = await this.locate(id)
    const lease = takeLease(join(dir, LEASE), id) // before anything is read for writing or appended
    try {
      const log = await parseLog(join(dir, LOG), id)
      await truncateTornTail(join(dir, LOG), log)
      const summary = new SummaryFold(log.header)
      for (const event of log.events) summary.add(event as SessionEvent)
      this.track(id, dir, summary, lease)
      return { header: log.header, events: log.events, where: { file: join(dir, LOG), firstLine: FIRST_EVENT_LINE } }
    } catch (error) {
      dropLease(join(dir, LEASE), lease)
      throw error
    }
  }

  async read(id: string): Promise<StoredLog> {
    const live = this.open.get(id)
    if (live) live.writer.flush()
    const file = join(await this.locate(id), LOG)
    const log = await parseLog(file, id)
    return { header: log.header, events: log.events, where: { file, firstLine: FIRST_EVENT_LINE } }
  }

  append(id: string, event: SessionEvent): void {
    const open = this.open.get(id)
    if (!open) throw new SessionError('SESSION_CLOSED', `session ${id} is not open for writing in this process`)
    open.writer.push(JSON.stringify(event))
    open.summary.add(event)
    open.timer ??= setTimeout(() => this.flushOpen(id), this.config.batchMs)
  }

  async flush(id: string): Promise<void> {
    this.flushOpen(id)
  }

  async release(id: string): Promise<void> {
    this.closeOpen(id)
  }

  async list(): Promise<SessionSummary[]> {
    const folders: { id: string; dir: string }[] = []
    for (const key of await readdirOrEmpty(this.root)) {
      for (const id of await readdirOrEmpty(join(this.root, key))) folders.push({ id, dir: join(this.root, key, id) })
    }
    // Each folder costs a few small reads (meta.json, the log's size, the lease): several in flight at once, so a
    // thousand sessions are not a thousand round trips one after the other.
    const found = await mapAtMost(folders, LIST_READS_AT_ONCE, async ({ id, dir }) => {
      const summary = this.open.get(id)?.summary ?? (await this.summaryFromDisk(id, dir))
      if (summary) this.located.set(id, dir) // a report right after (usage digests) finds each folder without a search
      return summary && (await summary.withLive(join(dir, LEASE)))
    })
    return found.filter((summary) => summary !== undefined).sort((a, b) => b.updatedAt - a.updatedAt)
  }

  async remove(ids: readonly string[]): Promise<void> {
    const held: { id: string; dir: string; lease: LeaseToken }[] = []
    try {
      for (const id of ids) {
        if (this.open.has(id))
          throw new SessionError('SESSION_LOCKED', `session ${id} is open in this process; close it first`)
        const dir = await this.locate(id)
        // `locate` accepts only plain ids; this is the second lock on the door: nothing outside the root goes.
        const inside = relative(this.root, dir)
        if (!inside || inside.startsWith('..') || inside.split(sep).length !== 2)
          throw new SessionError('SESSION_NOT_FOUND', `session ${id} is not stored under ${this.root}`)
        held.push({ id, dir, lease: takeLease(join(dir, LEASE), id) })
      }
    } catch (error) {
      for (const { dir, lease } of held) dropLease(join(dir, LEASE), lease)
      throw error
    }
    for (const { id, dir } of held) {
      // `rm` unlinks symlinks and hard links without following them: an attachment linked into a fork stays there.
      await rm(dir, { recursive: true, force: true })
      this.located.delete(id)
      await rmdir(dirname(dir)).catch(() => undefined) // the workspace folder, when this was its last session
    }
  }

  async recordCheck(id: string, check: StoredCheck): Promise<void> {
    if (this.open.has(id)) return // this process writes it: its meta.json follows the live fold
    const dir = await this.locate(id)
    if (await leaseIsLive(join(dir, LEASE))) return
    const meta = JSON.parse(await readFile(join(dir, META), 'utf8')) as SessionSummary & { bytes?: number }
    // Only a meta.json that still describes the whole log may carry a verdict about it.
    if (meta.bytes === undefined || meta.bytes !== (await stat(join(dir, LOG))).size) return
    await replaceMeta(dir, { ...meta, checked: check })
  }

  /**
   * A derived value of an idle session, kept in its meta.json under `derived.<name>` with the key the listing
   * verdict is checked against (bytes, events, last time) and `version`: while the log is what it was, no
   * log is read. A session open here or held by another live process is derived from its log, not kept.
   */
  override async derived<T>(
    id: string,
    name: string,
    version: string,
    derive: (events: readonly SessionEvent[]) => T,
  ): Promise<T> {
    const dir = await this.locate(id)
    const meta = this.open.has(id) ? undefined : (this.listedMeta.get(id) ?? (await readMeta(dir)))
    const key = meta && `${version}:${meta.bytes}:${meta.events}:${meta.updatedAt}`
    const kept = meta?.derived?.[name]
    if (meta && kept && kept.key === key && meta.bytes === (await stat(join(dir, LOG))).size) return kept.value as T
    this.open.get(id)?.writer.flush()
    const log = await parseLog(join(dir, LOG), id)
    const value = derive(log.events as SessionEvent[])
    // Kept only against a meta.json that describes exactly these bytes, and not while a live writer owns it;
    // read again (not the listed copy) so a verdict recorded since is kept too.
    const current = meta && (await readMeta(dir))
    if (
      current &&
      current.bytes === log.validBytes + log.tornBytes &&
      `${version}:${current.bytes}:${current.events}:${current.updatedAt}` === key &&
      !(await leaseIsLive(join(dir, LEASE)))
    ) {
      const updated: StoredMeta = { ...current, derived: { ...current.derived, [name]: { key, value } } }
      await replaceMeta(dir, updated).then(
        () => this.listedMeta.set(id, updated),
        () => undefined,
      )
    }
    return value
  }

  async folderOf(id: string): Promise<string> {
    return this.locate(id)
  }

  async folderFor(header: SessionHeader): Promise<string> {
    if (!/^[A-Za-z0-9_-]+$/.test(header.id))
      throw new SessionError('SESSION_NOT_FOUND', `"${header.id}" is not a session id`)
    const taken = await this.locate(header.id).then(
      () => true,
      () => false,
    )
    if (taken) throw new SessionError('SESSION_EXISTS', `session ${header.id} already exists under ${this.root}`)
    this.located.delete(header.id)
    return join(this.root, cwdKey(header.cwd), header.id)
  }

  private async summaryFromDisk(id: string, dir: string): Promise<SummaryFold | undefined> {
    let meta: (SessionSummary & { bytes?: number }) | undefined
    try {
      meta = JSON.parse(await readFile(join(dir, META), 'utf8')) as SessionSummary & { bytes?: number }
      // A crash after the last meta.json write leaves it behind the log: fold the log instead.
      if (meta.bytes !== (await stat(join(dir, LOG))).size) throw new Error('stale meta.json')
      if ((meta as StoredMeta).fold !== SUMMARY_FOLD_VERSION) throw new Error('meta.json of an older fold')
      this.listedMeta.set(id, meta as StoredMeta)
      const fold = new SummaryFold({ format: 'dsh-session', version: 1, id, cwd: meta.cwd, createdAt: meta.createdAt })
      const { bytes, derived: _derived, fold: _fold, ...summary } = meta as StoredMeta
      Object.assign(fold.summary, summary, { storedBytes: bytes })
      return fold
    } catch {
      try {
        const log = await parseLog(join(dir, LOG), id)
        const fold = new SummaryFold(log.header)
        for (const event of log.events) fold.add(event as SessionEvent)
        // Written back (a crash left it stale, an import or a copy brought none) so the next listing reads no
        // log; not while another process writes this session: its meta.json is that writer's to keep.
        const bytes = log.validBytes + log.tornBytes
        if (!this.open.has(id) && !(await leaseIsLive(join(dir, LEASE))))
          await replaceMeta(dir, { ...fold.summary, bytes, fold: SUMMARY_FOLD_VERSION }).catch(() => undefined)
        fold.summary.storedBytes = bytes
        return fold
      } catch (error) {
        if (!meta) return undefined
        // A log that no longer parses is still listed, marked damaged, under what meta.json last knew.
        const fold = new SummaryFold({
          format: 'dsh-session',
          version: 1,
          id,
          cwd: meta.cwd,
          createdAt: meta.createdAt,
        })
        const { bytes: _bytes, derived: _derived, fold: _fold, ...summary } = meta as StoredMeta
        Object.assign(fold.summary, summary, { damaged: error instanceof Error ? error.message : String(error) })
        return fold
      }
    }
  }

  private track(id: string, dir: string, summary: SummaryFold, lease: LeaseToken) {
    this.open.set(id, {
      dir,
      lease,
      writer: new LineWriter(join(dir, LOG), this.config.fsync),
      summary,
      timer: undefined,
      metaStatus: undefined,
    })
  }

  private flushOpen(id: string) {
    const open = this.open.get(id)
    if (!open) return
    if (open.timer) clearTimeout(open.timer)
    open.timer = undefined
    if (!open.writer.pending) return
    open.writer.flush()
    // meta.json only serves listings: rewrite it when a turn starts or ends, not on every flush.
    if (open.summary.status !== open.metaStatus) this.writeMeta(open)
  }

  /**
   * Synchronous on purpose: it runs from the batch timer and from the disposer at process exit (which cannot
   * await), and a few hundred bytes written then renamed do not hold the event loop.
   */
  private writeMeta(open: Open) {
    const meta = join(open.dir, META)
    writeFileSync(
      `${meta}.tmp`,
      JSON.stringify({
        ...open.summary.summary,
        bytes: statSync(join(open.dir, LOG)).size,
        fold: SUMMARY_FOLD_VERSION,
      }),
    )
    renameSync(`${meta}.tmp`, meta)
    open.metaStatus = open.summary.status
  }

  private closeOpen(id: string) {
    const open = this.open.get(id)
    if (!open) return
    this.flushOpen(id)
    this.writeMeta(open)
    open.writer.close()
    this.open.delete(id)
    dropLease(join(open.dir, LEASE), open.lease)
  }
}

/** meta.json as stored: the listing facts, the log's size they describe, and values derived from the log (see `derived`). */
type StoredMeta = SessionSummary & {
  bytes?: number
  /** The SummaryFold version that wrote it (SUMMARY_FOLD_VERSION); another one is folded again. */
  fold?: number
  derived?: Record<string, { key: string; value: unknown }>
}

async function readMeta(dir: string): Promise<StoredMeta | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, META), 'utf8')) as StoredMeta
  } catch {
    return undefined
  }
}

/**
 * Replaces meta.json from outside the session's writer: a temp file of its own, then a rename, so a racing
 * writer's meta.json is never torn (whichever lands last wins, and a stale one is noticed by its `bytes`).
 */
async function replaceMeta(dir: string, meta: object): Promise<void> {
  const temp = join(dir, `${META}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`)
  try {
    await writeFile(temp, JSON.stringify(meta), { mode: 0o600 })
    await rename(temp, join(dir, META))
  } catch (error) {
    await unlink(temp).catch(() => undefined)
    throw error
  }
}

/** The entries of a folder, or none when it does not exist (yet). */
async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (error: any) {
    if (error?.code === 'ENOENT' || error?.code === 'ENOTDIR') return []
    throw error
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  )
}
