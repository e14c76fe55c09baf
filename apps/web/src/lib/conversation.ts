import type { Frame, SessionView, WireEvent, WirePressure } from '@dsh/web-protocol'
import { call, messageOf } from './api.ts'
import { Emitter } from './emitter.ts'
import { fold, type Folded } from './fold.ts'
import { stream } from './stream.ts'

const FIRST_PAGE = 300

/**
 * One open session in this tab: the newest page of its log, older pages as the user scrolls up, and live
 * events from the stream (subscribed from the seq after the last loaded one, also after a reconnect). A page is
 * folded whole; a live event is applied to the fold on its own (O(1), only its rows get a new version), and
 * the page re-renders at most once per animation frame, however fast events arrive.
 */
export class Conversation {
  readonly changed = new Emitter()
  view: SessionView | undefined
  events: WireEvent[] = []
  /** Seq of the first loaded event's page; 0 when the whole log is loaded. */
  start = 0
  /** The seq the next live event will have. */
  end = 0
  folded: Folded = fold([])
  pressure: WirePressure | undefined
  error: string | undefined
  loadingOlder = false
  loaded = false
  /**
   * The tab lost dsh (the stream is down and the host does not answer) while this session's turn ran: its open
   * calls and the turn show interrupted, not spinning on. Once the stream is back, the session is read again.
   */
  lost = false
  private unsubscribe: (() => void) | undefined
  private readonly offStream: () => void
  private frame = 0
  private disposed = false

  constructor(readonly id: string) {
    this.offStream = stream.changed.subscribe(() => this.onStream())
  }

  private onStream(): void {
    if (stream.state === 'offline' && this.loaded && !this.lost) {
      this.lost =
        this.folded.openTurn || this.folded.items.some((item) => item.kind === 'tool' && item.status === 'running')
      if (!this.lost) return
      this.folded.settle()
      this.changed.emit()
    } else if (stream.state === 'open' && this.lost) {
      this.lost = false
      // What happened while the tab was away (the turn's end as the stopping dsh logged it) is in the log.
      void this.open()
    }
  }

  async open(): Promise<void> {
    try {
      const [view, page] = await Promise.all([
        call('sessions.open', { sessionId: this.id }),
        call('sessions.page', { sessionId: this.id, limit: FIRST_PAGE }),
      ])
      if (this.disposed) return
      this.view = view
      this.pressure = view.pressure
      this.events = page.events
      this.start = page.start
      this.end = page.end
      this.loaded = true
      this.error = undefined
      this.refold()
      this.unsubscribe ??= stream.subscribe(
        'session',
        this.id,
        () => ({ since: this.end }),
        (frame) => this.onFrame(frame),
      )
    } catch (error) {
      this.error = messageOf(error)
      this.changed.emit()
    }
  }

  /** Re-reads the view (agent state, route, preset) without touching the loaded events. */
  async reloadView(): Promise<void> {
    try {
      this.view = await call('sessions.open', { sessionId: this.id })
      this.changed.emit()
    } catch (error) {
      this.error = messageOf(error)
      this.changed.emit()
    }
  }

  /** The page before the loaded events; with `untilSeq`, large enough to reach it (the host caps a page). */
  async loadOlder(untilSeq?: number): Promise<void> {
    if (this.loadingOlder || this.start === 0 || !this.loaded) return
    this.loadingOlder = true
    this.changed.emit()
    try {
      const limit = untilSeq !== undefined ? Math.max(FIRST_PAGE, this.start - untilSeq + FIRST_PAGE) : FIRST_PAGE
      const page = await call('sessions.page', { sessionId: this.id, before: this.start, limit })
      this.events = [...page.events, ...this.events]
      this.start = page.start
    } catch (error) {
      this.error = messageOf(error)
    } finally {
      this.loadingOlder = false
      this.refold()
    }
  }

  dispose(): void {
    this.disposed = true
    this.offStream()
    this.unsubscribe?.()
    cancelAnimationFrame(this.frame)
  }

  private onFrame(frame: Frame): void {
    if (frame.ch === 'error') {
      this.error = frame.message
      return this.changed.emit()
    }
    if (frame.ch !== 'session') return
    if (frame.type === 'event') {
      if (frame.event.seq < this.end) return
      this.events.push(frame.event)
      this.folded.apply(frame.event)
      this.end = frame.event.seq + 1
      if (this.view) this.view = { ...this.view, length: this.end }
      this.schedule()
    } else if (frame.type === 'pressure') {
      this.pressure = frame.pressure
      this.schedule()
    } else if (frame.type === 'reset') {
      this.unsubscribe?.()
      this.unsubscribe = undefined
      void this.open()
    }
  }

  private schedule(): void {
    if (this.frame) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      this.changed.emit()
    })
  }

  /** Folds the loaded pages again from their first event (a page loaded, the stream reset). */
  private refold(): void {
    this.folded = fold(this.events)
    // Nobody runs the session (no agent here, no lease elsewhere): a call it left open was cut by a crash or a
    // restart, and shows as interrupted now, not when the next message resumes it.
    if (this.view && this.view.agent === null && !this.view.lockedElsewhere) this.folded.settle()
    this.changed.emit()
  }
}
