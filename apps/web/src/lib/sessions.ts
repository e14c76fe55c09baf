import type { AgentState, SessionListItem } from '@dsh/web-protocol'
import { call, messageOf } from './api.ts'
import { Emitter } from './emitter.ts'
import { stream } from './stream.ts'

/**
 * The sidebar's list: sessions from the host, refreshed when the `sessions` channel says one changed, with
 * agent states and waiting approvals applied as their frames arrive (no refetch needed for those).
 */
class SessionList {
  readonly changed = new Emitter()
  items: SessionListItem[] = []
  launchCwd = ''
  loaded = false
  error: string | undefined
  private refreshing: Promise<void> | undefined
  private again = false

  start(): void {
    stream.subscribe(
      'sessions',
      '*',
      () => ({}),
      (frame) => {
        if (frame.ch !== 'sessions') return
        if (frame.type === 'changed') return void this.refresh()
        const item = this.items.find((candidate) => candidate.id === frame.sessionId)
        if (!item) return void this.refresh()
        if (frame.type === 'agent') this.patch(frame.sessionId, { agent: frame.agent })
        else if (frame.type === 'approvals') this.patch(frame.sessionId, { pendingApprovals: frame.pending })
      },
    )
    // The host gone (stopped, restarted): no turn of it runs on, so no row spins; once the stream is back the
    // list is read again from whatever dsh now answers.
    let wasOpen = false
    stream.changed.subscribe(() => {
      if (stream.state === 'offline' && this.items.some((item) => item.agent === 'running'))
        this.items = this.items.map((item) => (item.agent === 'running' ? { ...item, agent: null } : item))
      if (stream.state === 'offline') this.changed.emit()
      if (stream.state === 'open' && wasOpen) void this.refresh()
      if (stream.state === 'open') wasOpen = true
    })
    void this.refresh()
  }

  agentOf(id: string): AgentState | undefined {
    return this.items.find((item) => item.id === id)?.agent
  }

  /** Coalesces bursts of change frames into one request at a time (plus one more if any arrived meanwhile). */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true
      return this.refreshing
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false
          const result = await call('sessions.list', {})
          this.items = result.sessions
          this.launchCwd = result.launchCwd
          this.error = undefined
          this.loaded = true
          this.changed.emit()
        } while (this.again)
      } catch (error) {
        this.error = messageOf(error)
        this.changed.emit()
      } finally {
        this.refreshing = undefined
      }
    })()
    return this.refreshing
  }

  private patch(id: string, change: Partial<SessionListItem>): void {
    this.items = this.items.map((item) => (item.id === id ? { ...item, ...change } : item))
    this.changed.emit()
  }
}

export const sessions = new SessionList()

/**
 * What the sidebar calls a session: its title, else (a subagent's child) the task's description, else its
 * first prompt (a child's is the hidden instructions its parent's model wrote).
 */
export function labelOf(item: Pick<SessionListItem, 'title' | 'firstPrompt' | 'subagentOf'>): string {
  return item.title || item.subagentOf?.description || item.firstPrompt || 'New session'
}
