import type { AnySessionEvent, SessionEvent, SessionHeader } from '@dsh/session'
import type {} from '@dsh/tools'
import { localTime, oneLine, summarizeArguments, printable, textOf } from './text.ts'

export interface RenderLimits {
  /** Characters of a message, argument or result preview. */
  previewChars: number
}

/** `#12  label  text`, with the event number people pass to `fork --at`. */
const line = (seq: number, label: string, text: string) =>
  printable(`${`#${seq}`.padStart(6)}  ${label.padEnd(10)} ${text}`.trimEnd())

/** The header lines of `sessions show`: id, directory, creation, parentage. */
export function headerLines(header: SessionHeader): string[] {
  const lines = [`session ${header.id}`, `cwd     ${header.cwd}`, `created ${localTime(header.createdAt)}`]
  if (header.parent) lines.push(`forked  from ${header.parent.id} at #${header.parent.atSeq}`)
  return lines
}

/**
 * The conversation as a person reads it: prompts, answers, tool calls with their results, route changes,
 * turn ends (the event numbers of `turn/end` are where a fork may start), and what a command printed before
 * a crash cut it (its `tool/output` pieces, where no result says how it ended). Chunks, headers and bookkeeping
 * events are left out: `--json` shows everything.
 */
export function transcriptLines(events: readonly SessionEvent[], limits: RenderLimits): string[] {
  const out: string[] = []
  const finished = new Set(
    (events as readonly AnySessionEvent[]).flatMap((event) =>
      event.type === 'tool/result' ? [event.data.callId] : [],
    ),
  )
  const preview = (text: string) => oneLine(text, limits.previewChars)
  for (const raw of events) {
    const event = raw as AnySessionEvent
    switch (event.type) {
      case 'user/message':
        out.push(
          line(
            event.seq,
            event.data.source === 'user' ? 'user' : event.data.source,
            preview(textOf(event.data.content)),
          ),
        )
        break
      case 'assistant/message': {
        const text = textOf(event.data.content)
        if (text) out.push(line(event.seq, 'assistant', preview(text)))
        if (event.data.error)
          out.push(line(event.seq, 'error', `${event.data.error.code}: ${preview(event.data.error.message)}`))
        break
      }
      case 'tool/call':
        out.push(
          line(
            event.seq,
            'tool',
            `${event.data.name} ${summarizeArguments(event.data.arguments, limits.previewChars)}`,
          ),
        )
        break
      case 'tool/result': {
        const text = preview(textOf(event.data.content))
        out.push(
          line(
            event.seq,
            'result',
            event.data.error ? `${event.data.error.code}: ${text || preview(event.data.error.message)}` : text,
          ),
        )
        break
      }
      case 'tool/output':
        if (finished.has(event.data.callId)) break
        for (const printed of event.data.text.split('\n').filter((text) => text.trim()))
          out.push(line(event.seq, 'printed', preview(printed)))
        break
      case 'model/route': {
        const { provider, model, effort } = event.data.route
        out.push(line(event.seq, 'route', `${provider}/${model}${effort ? ` (effort ${effort})` : ''}`))
        break
      }
      case 'turn/end':
        out.push(
          line(
            event.seq,
            'turn end',
            `${event.data.reason}${event.data.error ? ` — ${event.data.error.code}: ${preview(event.data.error.message)}` : ''}`,
          ),
        )
        break
    }
  }
  return out
}
