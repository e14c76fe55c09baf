import type { AnySessionEvent, SessionEvent, SessionHeader, SessionSummary } from '@dsh/session'
import { foldTitle, promptText, shorten } from '@dsh/session-admin'
import { leaseIsLive } from './lease.ts'

const PROMPT_PREVIEW = 120
/**
 * What this fold folds, by version: a meta.json written by an older fold (or none) lacks facts this one
 * knows (a child's `subagentOf` since 2), so a listing folds its log again once instead of trusting it.
 */
export const SUMMARY_FOLD_VERSION = 2

/** The listing facts of one session, folded event by event (kept beside the log as meta.json). */
export class SummaryFold {
  readonly summary: SessionSummary

  constructor(header: SessionHeader) {
    this.summary = {
      id: header.id,
      cwd: header.cwd,
      createdAt: header.createdAt,
      updatedAt: header.createdAt,
      events: 0,
      turns: 0,
      status: 'idle',
      live: false,
    }
    if (header.parent) this.summary.parent = header.parent
  }

  add(raw: SessionEvent): void {
    const event = raw as AnySessionEvent
    const s = this.summary
    if (!s.storedKinds?.includes(event.type)) s.storedKinds = [...(s.storedKinds ?? []), event.type].sort()
    s.events = event.seq + 1
    s.updatedAt = event.time
    if (event.type === 'turn/start') {
      s.turns++
      s.status = 'open'
    } else if (event.type === 'turn/end') s.status = 'idle'
    else if (event.type === 'user/message' && s.firstPrompt === undefined && event.data.source === 'user') {
      // Mention markup (`[referenced: …]`, `<context source=…>`) is left out: the prompt stands in for a title.
      s.firstPrompt = shorten(promptText(event.data.content), PROMPT_PREVIEW)
    } else if (event.type === 'session/title') Object.assign(s, foldTitle(s, event.data))
    else if ((event.type as string) === 'subagent/parent') {
      // Declared by @dsh/subagent, which this storage does not depend on: read by shape.
      const link = event.data as { parentSessionId?: unknown; description?: unknown }
      if (typeof link.parentSessionId === 'string')
        s.subagentOf = {
          id: link.parentSessionId,
          description: typeof link.description === 'string' ? link.description : '',
        }
    } else if (event.type === 'session/archived') {
      if (event.data.archived) s.archived = true
      else delete s.archived
    }
  }

  get status(): SessionSummary['status'] {
    return this.summary.status
  }

  async withLive(leaseFile: string): Promise<SessionSummary> {
    return { ...this.summary, live: await leaseIsLive(leaseFile) }
  }
}
