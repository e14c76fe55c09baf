import type { AnySessionEvent, SessionEvent, SessionHeader, SessionSummary } from '@dsh/session'
import { foldTitle, promptText, shorten } from '@dsh/session-admin'
import { leaseIsLive } from './lease.ts'

const PROMPT_PREVIEW = 120

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
    else if (event.type === 'session/archived') {
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
