import { createHash, randomBytes } from 'node:crypto'
import { type Context, Service } from '@dsh/cordis'
import { CORE_KINDS, type KindSpec, type SessionEvent, type SessionHeader } from './events.ts'
import { planRepair } from './repair.ts'
import { CORE_SPECS, withSchemaCheck } from './validate.ts'
import { openTurnAt, Session, type SessionHost } from './session.ts'
import { findNonPlain } from './plain-json.ts'
import { mapAtMost } from './at-most.ts'
import { SessionError, type SessionStorage, type SessionSummary, type StoredCheck, type StoredLog } from './storage.ts'

declare module '@dsh/cordis' {
  interface Context {
    sessions: Sessions
  }
  interface Events {
    /** @mode emit — after an event is committed to a session's log (in memory and queued for storage). */
    'session/event'(session: Session, event: SessionEvent): void
    /** @mode emit — a session was created, opened (resumed) or forked in this process. */
    'session/opened'(session: Session, how: 'created' | 'resumed' | 'forked'): void
    /**
     * @mode bail — why no session may work in `cwd` (the sandbox policy: dsh's own home), or undefined. Asked
     * before every create, resume and fork, so every surface refuses the same way (docs/security.md).
     */
    'session/workspace-refused'(cwd: string): string | undefined
  }
}

/** Stored logs a listing reads and checks at once. */
const LIST_CHECKS_AT_ONCE = 4

/** Time-sortable, unguessable session id. */
export function newSessionId(): string {
  return `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(5).toString('hex')}`
}

/**
 * The session log service (D+P; docs/architecture.md, "The session log"). Owns: the logs of this process,
 * the runtime registry of event kinds, crash repair on resume and fork. Must not own: bytes on disk (the
 * storage registered by the persistence seam) or what any event means beyond repair.
 */
export class Sessions extends Service {
  private readonly kinds = new Map<string, KindSpec>()
  private readonly live = new Map<string, Session>()
  /** Resumes under way, by session id: every caller of `resume` while one runs gets its promise. */
  private readonly opening = new Map<string, Promise<Session>>()
  private readonly damage = new Map<string, StoredCheck>()
  private storage: SessionStorage | undefined
  private readonly host: SessionHost

  constructor(ctx: Context) {
    super(ctx, 'sessions')
    for (const kind of CORE_KINDS) this.kinds.set(kind, CORE_SPECS[kind] ?? {})
    this.host = {
      checkKind: (type, data) => {
        const spec = this.kinds.get(type)
        if (!spec) return `unknown event kind "${type}" (no mounted plugin defines it)`
        return spec.validate?.(data)
      },
      isIgnorable: (type) => !!this.kinds.get(type)?.ignorable,
      stored: (session, event) => this.storage?.append(session.id, event),
      flush: async (session) => {
        if (this.storage && !session.closed) await this.storage.flush(session.id)
      },
      committed: (session, event) => this.ctx.emit('session/event', session, event),
    }
    ctx.effect(() => () => this.closeAll(), 'close live sessions')
  }

  /** Declares an event kind owned by the calling plugin, for as long as it lives. */
  defineKind(ctx: Context, kind: string, spec: KindSpec = {}): void {
    ctx.effect(() => {
      if (this.kinds.has(kind)) throw new Error(`session event kind "${kind}" is already defined`)
      this.kinds.set(kind, withSchemaCheck(spec))
      return () => this.kinds.delete(kind)
    }, `session kind ${kind}`)
  }

  /** The persistence seam registers its storage here; without one, sessions live in memory only. */
  useStorage(ctx: Context, storage: SessionStorage): void {
    ctx.effect(() => {
      if (this.storage) throw new Error('a session storage is already registered')
      this.storage = storage
      return () => {
        if (this.storage === storage) this.storage = undefined
      }
    }, 'session storage')
  }

  get persistent(): boolean {
    return !!this.storage
  }

  get(id: string): Session | undefined {
    return this.live.get(id)
  }

  async create(options: { cwd: string; id?: string }): Promise<Session> {
    this.checkWorkspace(options.cwd)
    const header: SessionHeader = {
      format: 'dsh-session',
      version: 1,
      id: options.id ?? newSessionId(),
      cwd: options.cwd,
      createdAt: Date.now(),
    }
    if (this.live.has(header.id)) throw new SessionError('SESSION_EXISTS', `session ${header.id} is already open`)
    await this.storage?.create(header)
    return this.adopt(new Session(this.host, header), 'created')
  }

  /**
   * Opens a stored session to continue it: takes the writer lease, checks every event, and appends what
   * crash repair requires (docs/architecture.md, "The session log"). The returned log is ready for a new turn.
   */
  async resume(id: string): Promise<Session> {
    const existing = this.live.get(id)
    if (existing) return existing
    // One open per session at a time: a second caller while the first awaits the lease and the load gets the
    // same session (before, it met the first caller's lease as SESSION_LOCKED; issue #28.3).
    const inFlight = this.opening.get(id)
    if (inFlight) return inFlight
    const opening = this.open(id).finally(() => this.opening.delete(id))
    this.opening.set(id, opening)
    return opening
  }

  private async open(id: string): Promise<Session> {
    if (!this.storage)
      throw new SessionError('SESSION_NOT_FOUND', `session ${id} cannot be resumed: no session persistence is mounted`)
    const log = await this.storage.acquire(id)
    let session: Session
    try {
      this.checkWorkspace(log.header.cwd)
      session = new Session(this.host, log.header, this.checkLoaded(id, log))
    } catch (error) {
      await this.storage.release(id)
      throw error
    }
    this.adopt(session, 'resumed')
    for (const [type, data] of planRepair(session.events)) session.append(type, data as never)
    await session.flush()
    return session
  }

  /** Reads a stored (or live) session without taking it over. */
  async read(id: string): Promise<{ header: SessionHeader; events: SessionEvent[] }> {
    const live = this.live.get(id)
    if (live) return { header: live.header, events: [...live.events] }
    if (!this.storage)
      throw new SessionError('SESSION_NOT_FOUND', `session ${id} not found: no session persistence is mounted`)
    const log = await this.storage.read(id)
    return { header: log.header, events: this.checkLoaded(id, log) }
  }

  /**
   * Copies events `0..atSeq` (inclusive) of a session into a new one that records its parent. Refuses a
   * boundary inside an open turn: the fork would start mid-conversation.
   */
  async fork(id: string, atSeq: number): Promise<Session> {
    const { events } = await this.read(id)
    if (!Number.isInteger(atSeq) || atSeq < 0 || atSeq >= events.length) {
      throw new SessionError(
        'FORK_OUT_OF_RANGE',
        `cannot fork ${id} at seq ${atSeq}: the log has events 0..${events.length - 1}`,
      )
    }
    const open = openTurnAt(events, atSeq)
    if (open !== undefined) {
      const end = events.findIndex((event, index) => index > atSeq && event.type === 'turn/end')
      throw new SessionError(
        'FORK_INSIDE_TURN',
        `cannot fork ${id} at seq ${atSeq}: a turn is open there${end >= 0 ? ` (it ends at seq ${end})` : ''}; fork at a turn boundary`,
      )
    }
    const cwd = (await this.read(id)).header.cwd
    this.checkWorkspace(cwd)
    const header: SessionHeader = {
      format: 'dsh-session',
      version: 1,
      id: newSessionId(),
      cwd,
      createdAt: Date.now(),
      parent: { id, atSeq },
    }
    await this.storage?.create(header)
    const prefix = events.slice(0, atSeq + 1)
    for (const event of prefix) this.storage?.append(header.id, event)
    const session = new Session(this.host, header, prefix)
    this.adopt(session, 'forked')
    await session.flush()
    return session
  }

  /** Stored sessions, most recent first; one whose log would not open is marked `damaged`. */
  async list(): Promise<SessionSummary[]> {
    if (!this.storage) return []
    // A few logs checked at a time: a first listing of a thousand sessions must not hold them all in memory.
    return mapAtMost(await this.storage.list(), LIST_CHECKS_AT_ONCE, (summary) => this.withDamage(summary))
  }

  /** Flushes, releases the lease and forgets a live session. */
  async close(id: string): Promise<void> {
    const session = this.live.get(id)
    if (!session) return
    this.live.delete(id)
    await this.storage?.release(id)
    session.closed = true
  }

  /** Throws WORKSPACE_REFUSED with the reason a listener gives for `cwd`, if one does. */
  private checkWorkspace(cwd: string): void {
    const why = this.ctx.bail('session/workspace-refused', cwd)
    if (why) throw new SessionError('WORKSPACE_REFUSED', why)
  }

  private adopt(session: Session, how: 'created' | 'resumed' | 'forked'): Session {
    this.live.set(session.id, session)
    this.ctx.emit('session/opened', session, how)
    return session
  }

  /**
   * Every stored event passes what an append checks (plain JSON, a known kind, the kind's validator) before
   * anything reads it; the first that fails is named by file, line, seq and field.
   */
  private checkLoaded(id: string, log: StoredLog): SessionEvent[] {
    const at = (index: number) => (log.where ? `${log.where.file}:${log.where.firstLine + index}: ` : '')
    return log.events.map((value, index) => {
      const event = value as SessionEvent
      const fail = (code: 'SESSION_CORRUPT' | 'UNKNOWN_KIND', problem: string) =>
        new SessionError(code, `${at(index)}session ${id}: event ${index} ${problem}`)
      if (!event || typeof event !== 'object' || Array.isArray(event) || typeof event.type !== 'string')
        throw fail('SESSION_CORRUPT', 'is not an event object')
      if (event.seq !== index) throw fail('SESSION_CORRUPT', `has seq ${event.seq}`)
      if (typeof event.time !== 'number')
        throw fail('SESSION_CORRUPT', `(seq ${index}, ${event.type}): time must be a number`)
      const spec = this.kinds.get(event.type)
      if (!spec) {
        if (event.ignorable === true) return event // kept uninterpreted: no reader here will fold it
        throw fail(
          'UNKNOWN_KIND',
          `has kind "${event.type}", which no mounted plugin defines (and it is not marked ignorable)`,
        )
      }
      const problem = findNonPlain(event.data) ?? (spec.validateStored ?? spec.validate)?.(event.data)
      if (problem)
        throw fail(
          'SESSION_CORRUPT',
          `(seq ${index}, ${event.type}): ${problem.startsWith('data') ? problem : `data: ${problem}`}`,
        )
      return event
    })
  }

  /**
   * A stored session's summary says whether it would open. The verdict is kept per process and recorded
   * with the storage (`recordCheck`), keyed by the log's size, length, last time and how the kinds it holds are mounted, so a
   * listing in a new process reads only the logs that changed since (opening a session always checks it).
   */
  private async withDamage(stored: SessionSummary): Promise<SessionSummary> {
    const { checked, storedBytes, storedKinds, ...summary } = stored
    if (this.live.has(summary.id)) return summary
    const key = `${storedBytes ?? '?'}:${summary.events}:${summary.updatedAt}:${this.kindsFingerprint(storedKinds ?? (summary.events === 0 ? [] : undefined))}`
    let verdict = [this.damage.get(summary.id), checked].find((known) => known?.key === key)
    if (!verdict) {
      let problem: string | undefined
      try {
        this.checkLoaded(summary.id, await this.storage!.read(summary.id))
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error)
      }
      verdict = problem === undefined ? { key } : { key, problem }
      // A cache write that fails (a read-only home, a log that moved on) costs the next listing a read, no more.
      if (!summary.live) await this.storage!.recordCheck?.(summary.id, verdict).catch(() => undefined)
    }
    this.damage.set(summary.id, verdict)
    return verdict.problem ? { ...summary, damaged: verdict.problem } : summary
  }

  /**
   * Names how the kinds a log holds are mounted now (every mounted kind when the storage does not say which it
   * holds): a verdict recorded while one of them was defined differently, or not at all, is checked again.
   */
  private kindsFingerprint(held: readonly string[] | undefined): string {
    const facts = held
      ? held.map((kind) => `${kind}=${this.kinds.has(kind) ? 'defined' : 'unknown'}`)
      : [...this.kinds.keys()].sort()
    return createHash('sha256').update(facts.join('\n')).digest('hex').slice(0, 16)
  }

  private async closeAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.close(id)))
  }
}
