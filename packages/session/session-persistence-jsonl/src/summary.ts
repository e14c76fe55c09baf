import type { AnySessionEvent, SessionEvent, SessionHeader, SessionSummary } from '@dsh/session'
import { leaseIsLive } from './lease.ts'

const PROMPT_PREVIEW = 120

/** The listing facts of one session, folded event by event (kept beside the log as meta.json). */
export class SummaryFold {
  readonly summary: SessionSummary

  constructor(header: SessionHeader) {
    this.summary = { id: header.id, cwd: header.cwd, createdAt: header.createdAt, updatedAt: header.createdAt, events: 0, turns: 0, status: 'idle', live: false }
    if (header.parent) this.summary.parent = header.parent
  }

  add(raw: SessionEvent): void {
    const event = raw as AnySessionEvent
    const s = this.summary
    s.events = event.seq + 1
    s.updatedAt = event.time
    if (event.type === 'turn/start') {
      s.turns++
      s.status = 'open'
    } else if (event.type === 'turn/end') s.status = 'idle'
    else if (event.type === 'user/message' && s.firstPrompt === undefined && event.data.source === 'user') {
      const text = event.data.content
        .flatMap((block) => (block.type === 'text' ? [block.text] : []))
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim()
      s.firstPrompt = text.length > PROMPT_PREVIEW ? `${text.slice(0, PROMPT_PREVIEW - 1)}…` : text
    } else if ((event.type as string) === 'session/title') {
      const title = (event.data as any)?.title
      if (typeof title === 'string') s.title = title
    }
  }

  get status(): SessionSummary['status'] {
    return this.summary.status
  }

  async withLive(leaseFile: string): Promise<SessionSummary> {
    return { ...this.summary, live: await leaseIsLive(leaseFile) }
  }
}
