import type { FsVersion } from '@dsh/fs'
import { agrees, Type, type AnySessionEvent, type Same, type SessionEvent, type Static } from '@dsh/session'

const FsVersionData = Type.Object({ mtimeMs: Type.Number(), size: Type.Number() })
agrees<Same<Static<typeof FsVersionData>, FsVersion>>(true) // @dsh/fs's type: the build fails if they part

/**
 * A file tool call saw a file at this version: before a read (so a change during the read counts as a
 * change) or after a successful write. It counts only once the call's `tool/result` is a success. Its type
 * and its check (issue #28.6).
 */
export const FsObservedData = Type.Object({ callId: Type.String(), path: Type.String(), version: FsVersionData })

declare module '@dsh/session' {
  interface SessionEventMap {
    'fs/observed': Static<typeof FsObservedData>
  }
}

export interface Observation {
  /** Real path of the file. */
  path: string
  version: FsVersion
  callId: string
  /** The tool that saw it. */
  tool: string
  seq: number
  time: number
}

/**
 * What the agent has seen of each file, folded from the log: `tool/call` (which tool), `fs/observed` (the
 * file and its version) and `tool/result` (only a success counts; a call cut by a crash gets an error result
 * on resume, so it never counts). Incremental: each fold reads only the events appended since the last.
 */
export class ObservationFold {
  private seen = 0
  private readonly tools = new Map<string, string>()
  private readonly pending = new Map<string, Omit<Observation, 'seq' | 'time'>>()
  private readonly latest = new Map<string, Observation>()

  update(events: readonly SessionEvent[]): this {
    for (; this.seen < events.length; this.seen++) {
      const event = events[this.seen] as AnySessionEvent
      if (event.type === 'tool/call') this.tools.set(event.data.callId, event.data.name)
      else if (event.type === 'fs/observed') {
        const { callId, path, version } = event.data
        this.pending.set(callId, { callId, path, version, tool: this.tools.get(callId) ?? 'unknown' })
      } else if (event.type === 'tool/result') {
        const observed = this.pending.get(event.data.callId)
        this.pending.delete(event.data.callId)
        if (observed && !event.data.error)
          this.latest.set(observed.path, { ...observed, seq: event.seq, time: event.time })
      }
    }
    return this
  }

  /** The last successful observation of a file (by real path). */
  last(path: string): Observation | undefined {
    return this.latest.get(path)
  }
}
