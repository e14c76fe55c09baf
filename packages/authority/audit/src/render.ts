import type { AuditEntry } from './audit.ts'

export interface RenderOptions {
  /** Shown in the heading when given. */
  sessionId?: string
}

/** The audit as text: one line per entry, `#seq  time (UTC, ISO 8601)  summary`. */
export function renderAudit(entries: readonly AuditEntry[], options: RenderOptions = {}): string {
  const heading = `Authority audit${options.sessionId ? ` of session ${options.sessionId}` : ''}: ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`
  if (!entries.length)
    return `${heading}\n(no authority change, probe, approval or network decision in this session: it ran under the configured defaults)\n`
  const width = String(entries.at(-1)!.seq).length + 1
  const lines = entries.map(
    (entry) => `${`#${entry.seq}`.padEnd(width)}  ${new Date(entry.time).toISOString()}  ${entry.summary}`,
  )
  return `${heading}\n${lines.join('\n')}\n`
}
