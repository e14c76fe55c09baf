import type { AnySessionEvent, SessionEvent } from '@dsh/session'

/** One event a summary replaced, as the model may read it back. */
export interface SummarizedEvent {
  seq: number
  /** 1-based turn of the session the event belongs to. */
  turn: number
  text: string
}

const textOf = (blocks: readonly { type: string; text?: string }[]) =>
  blocks.flatMap((block) => (block.type === 'text' && block.text ? [block.text] : [])).join('\n')

function render(event: AnySessionEvent, callNames: Map<string, string>): string | undefined {
  switch (event.type) {
    case 'user/message':
      return event.data.source === 'summary' ? undefined : `user: ${textOf(event.data.content)}`
    case 'assistant/message': {
      if (event.data.error || event.data.interrupted) return undefined
      const calls = event.data.content.flatMap((block) =>
        block.type === 'tool-call' ? [`${block.name}(${JSON.stringify(block.arguments)}) [call ${block.callId}]`] : [],
      )
      return [`assistant: ${textOf(event.data.content)}`, ...calls.map((call) => `  calls ${call}`)].join('\n')
    }
    case 'tool/result':
      return `result of ${callNames.get(event.data.callId) ?? 'a tool'} [call ${event.data.callId}]${event.data.error ? ` (error ${event.data.error.code})` : ''}: ${textOf(event.data.content)}`
    default:
      return undefined
  }
}

/**
 * The events some summary replaced (the seq ranges of `user/message { replaces }`), oldest first, with their
 * turn: what the model no longer sees whole. Pure, over the log.
 */
export function summarizedEvents(events: readonly SessionEvent[]): SummarizedEvent[] {
  const ranges: [number, number][] = []
  for (const event of events as readonly AnySessionEvent[])
    if (event.type === 'user/message' && event.data.replaces)
      ranges.push([event.data.replaces.fromSeq, event.data.replaces.toSeq])
  if (!ranges.length) return []
  const covered = (seq: number) => ranges.some(([from, to]) => seq >= from && seq <= to)
  const callNames = new Map<string, string>()
  const out: SummarizedEvent[] = []
  let turn = 0
  for (const event of events as readonly AnySessionEvent[]) {
    if (event.type === 'turn/start') turn++
    if (event.type === 'tool/call') callNames.set(event.data.callId, event.data.name)
    if (!covered(event.seq)) continue
    const text = render(event, callNames)
    if (text !== undefined) out.push({ seq: event.seq, turn: Math.max(1, turn), text })
  }
  return out
}

/** Whether anything of the session was summarized (the tool is offered from then on). */
export const hasSummary = (events: readonly SessionEvent[]) =>
  (events as readonly AnySessionEvent[]).some(
    (event) => event.type === 'user/message' && event.data.source === 'summary' && !!event.data.replaces,
  )
