import type { Message } from '@dsh/llm'
import { MessageFold } from './derive.ts'
import type { AnySessionEvent, EventKind, SessionEvent, SessionEventMap, SessionHeader } from './events.ts'
import { deepFreeze, findNonPlain } from './plain-json.ts'
import { SessionError } from './storage.ts'

/** What a Session needs from its owner: kind checks, storage and the after-commit notification. */
export interface SessionHost {
  checkKind(type: string, data: unknown): string | undefined
  isIgnorable(type: string): boolean
  stored(session: Session, event: SessionEvent): void
  flush(session: Session): Promise<void>
  committed(session: Session, event: SessionEvent): void
}

/**
 * One append-only log (docs/architecture.md, "The session log"). `seq === index`; data is validated as plain JSON, copied and frozen at
 * append; listeners hear of an event only after it is committed.
 */
export class Session {
  private readonly log: SessionEvent[] = []
  private readonly fold = new MessageFold()
  /**
   * The events of each kind, in order: `last()` and `all()` are asked on every step (the authority reads
   * its grants and ceilings, the request its header) and must not scan the log, whose length grows with the
   * session (docs/performance.md, Long sessions). One reference per event.
   */
  private readonly byKind = new Map<string, SessionEvent[]>()
  /** The turn open after the last event (`openTurnAt` over the whole log, kept as events arrive). */
  private open: string | undefined
  closed = false

  constructor(
    private readonly host: SessionHost,
    readonly header: SessionHeader,
    restored: SessionEvent[] = [],
  ) {
    for (const event of restored) {
      this.log.push(deepFreeze(event))
      this.index(event)
    }
  }

  private index(event: SessionEvent): void {
    const ofKind = this.byKind.get(event.type)
    if (ofKind) ofKind.push(event)
    else this.byKind.set(event.type, [event])
    if (event.type === 'turn/start') this.open = (event as SessionEvent<'turn/start'>).data.turnId
    else if (event.type === 'turn/end') this.open = undefined
  }

  get id(): string {
    return this.header.id
  }

  get cwd(): string {
    return this.header.cwd
  }

  get events(): readonly SessionEvent[] {
    return this.log
  }

  get length(): number {
    return this.log.length
  }

  append<K extends EventKind>(type: K, data: SessionEventMap[K]): SessionEvent<K> {
    if (this.closed) throw new SessionError('SESSION_CLOSED', `session ${this.id} is closed`)
    const problem = findNonPlain(data) ?? this.host.checkKind(type, data)
    if (problem) throw new SessionError('INVALID_EVENT', `cannot append ${type} to session ${this.id}: ${problem}`)
    const event: SessionEvent<K> = { type, seq: this.log.length, time: Date.now(), data: structuredClone(data) }
    if (this.host.isIgnorable(type)) event.ignorable = true
    deepFreeze(event)
    this.log.push(event)
    this.index(event)
    this.host.stored(this, event)
    this.host.committed(this, event)
    return event
  }

  /** Makes every appended event durable (no-op without persistence). */
  flush(): Promise<void> {
    return this.host.flush(this)
  }

  /** The model's history, derived from the log (cached, incremental; sealed, the list frozen). */
  messages(): readonly Message[] {
    return this.fold.update(this.log)
  }

  last<K extends EventKind>(type: K): SessionEvent<K> | undefined {
    return this.byKind.get(type)?.at(-1) as SessionEvent<K> | undefined
  }

  /** The events of one kind in log order (a new array: the caller may keep or change it). */
  all<K extends EventKind>(type: K): SessionEvent<K>[] {
    return [...((this.byKind.get(type) ?? []) as SessionEvent<K>[])]
  }

  /** The turn id of a turn that started and has not ended, if any. */
  openTurn(): string | undefined {
    return this.open
  }
}

/** The turn open after event `seq` (inclusive), if any. */
export function openTurnAt(events: readonly SessionEvent[], seq: number): string | undefined {
  let open: string | undefined
  for (let i = 0; i <= seq && i < events.length; i++) {
    const event = events[i] as AnySessionEvent
    if (event.type === 'turn/start') open = event.data.turnId
    else if (event.type === 'turn/end') open = undefined
  }
  return open
}

/** The step of turn `turnId` that started and has not ended, if any (a loop closes it before `turn/end`). */
export function openStepOf(events: readonly SessionEvent[], turnId: string): number | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AnySessionEvent
    if (event.type === 'step/end' || (event.type === 'turn/start' && event.data.turnId === turnId)) return undefined
    if (event.type === 'step/start') return event.data.turnId === turnId ? event.data.step : undefined
  }
  return undefined
}
