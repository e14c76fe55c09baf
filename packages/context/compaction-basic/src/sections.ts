import type { SummarySection } from '@dsh/compaction'
import type { AnySessionEvent, SessionEvent } from '@dsh/session'

/** The headings the summary instructions ask for, in order (the task survives a compaction: issue #18). */
export const SECTION_TITLES = ['Goal and constraints', 'Decisions', 'Done', 'Next', 'Open questions'] as const

/**
 * The model's summary split at the `## <title>` headings it was asked for; text before the first heading
 * or under another heading stays with the section above it. A summary with no such heading is one section.
 */
export function parseSections(text: string): SummarySection[] {
  const sections: SummarySection[] = []
  let current: SummarySection = { title: 'Summary', text: '', source: 'model' }
  for (const line of text.split('\n')) {
    const heading = /^#{1,4}\s*(.+?)\s*:?\s*$/.exec(line)?.[1]
    const known = heading && SECTION_TITLES.find((title) => title.toLowerCase() === heading.toLowerCase())
    if (known) {
      if (current.text.trim()) sections.push({ ...current, text: current.text.trim() })
      current = { title: known, text: '', source: 'model' }
    } else current.text += `${line}\n`
  }
  if (current.text.trim()) sections.push({ ...current, text: current.text.trim() })
  return sections
}

const EDITING_TOOLS = new Set(['write', 'edit', 'write_file'])
const READING_TOOLS = new Set(['read', 'read_file'])

/**
 * The files the session's tool calls up to `toSeq` read and changed, from the log (not from the model's
 * memory of them): file tools by their `path`, `str_replace_editor` by its command. Commands run by bash
 * are not attributed.
 */
export function filesTouched(events: readonly SessionEvent[], toSeq: number): { edited: string[]; read: string[] } {
  const edited = new Set<string>()
  const read = new Set<string>()
  for (const event of events as readonly AnySessionEvent[]) {
    if (event.seq > toSeq) break
    if (event.type !== 'tool/call') continue
    const args = (event.data.arguments ?? {}) as { path?: unknown; command?: unknown }
    if (typeof args.path !== 'string') continue
    const { name } = event.data
    if (EDITING_TOOLS.has(name) || (name === 'str_replace_editor' && args.command !== 'view')) edited.add(args.path)
    else if (READING_TOOLS.has(name) || name === 'str_replace_editor') read.add(args.path)
  }
  for (const path of edited) read.delete(path)
  return { edited: [...edited].sort(), read: [...read].sort() }
}

/** The files section, or undefined when no file tool ran. */
export function filesSection(files: { edited: string[]; read: string[] }): SummarySection | undefined {
  const lines = [
    files.edited.length ? `changed: ${files.edited.join(', ')}` : '',
    files.read.length ? `read: ${files.read.join(', ')}` : '',
  ].filter(Boolean)
  return lines.length ? { title: 'Files touched (from the log)', text: lines.join('\n'), source: 'log' } : undefined
}

/** The summary message's text: the model's summary as written, then the sections the log and hooks added. */
export function renderSummary(intro: string, summary: string, added: readonly SummarySection[]): string {
  return [intro, summary, ...added.map((section) => `## ${section.title}\n${section.text}`)].join('\n\n')
}
