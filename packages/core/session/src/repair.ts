import type { AnySessionEvent, EventKind, SessionEvent, SessionEventMap } from './events.ts'

export type RepairStep = { [K in EventKind]: [K, SessionEventMap[K]] }[EventKind]

/**
 * What a log left by a crash needs before it can continue (docs/architecture.md, "The session log", "Crash repair"), as events to append:
 * the text of a cut stream as an interrupted `assistant/message`; a synthetic `tool/result` for every call
 * with no durable result (`TOOL_NOT_STARTED` if it was never dispatched, else `TOOL_OUTCOME_UNKNOWN`); and
 * `turn/end { interrupted }` for an open turn. Pure; an intact log needs nothing.
 */
export function planRepair(events: readonly SessionEvent[]): RepairStep[] {
  let openTurn: string | undefined
  let chunks: { kind: 'text' | 'reasoning'; text: string }[] = []
  const calls = new Map<string, { name: string; dispatched: boolean }>()
  for (const raw of events) {
    const event = raw as AnySessionEvent
    switch (event.type) {
      case 'turn/start':
        openTurn = event.data.turnId
        break
      case 'turn/end':
        openTurn = undefined
        break
      case 'assistant/chunk':
        chunks.push(event.data)
        break
      case 'assistant/message':
        chunks = []
        // Calls the model made are owed a result even if the crash came before their tool/call events.
        for (const block of event.data.content)
          if (block.type === 'tool-call') calls.set(block.callId, { name: block.name, dispatched: false })
        break
      case 'tool/call':
        if (!calls.has(event.data.callId)) calls.set(event.data.callId, { name: event.data.name, dispatched: false })
        break
      case 'tool/dispatched': {
        const call = calls.get(event.data.callId)
        if (call) call.dispatched = true
        break
      }
      case 'tool/result':
        calls.delete(event.data.callId)
        break
    }
  }
  const steps: RepairStep[] = []
  if (chunks.length) {
    const text = chunks
      .filter((c) => c.kind === 'text')
      .map((c) => c.text)
      .join('')
    const reasoning = chunks
      .filter((c) => c.kind === 'reasoning')
      .map((c) => c.text)
      .join('')
    const content: SessionEventMap['assistant/message']['content'] = []
    if (reasoning) content.push({ type: 'reasoning', text: reasoning })
    if (text) content.push({ type: 'text', text })
    steps.push([
      'assistant/message',
      { content, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, finish: 'aborted', interrupted: true },
    ])
  }
  for (const [callId, call] of calls) {
    const code = call.dispatched ? 'TOOL_OUTCOME_UNKNOWN' : 'TOOL_NOT_STARTED'
    const message = call.dispatched
      ? `The ${call.name} call was running when dsh stopped; its outcome is unknown. Check the workspace before repeating it.`
      : `The ${call.name} call never started (dsh stopped before running it).`
    steps.push(['tool/result', { callId, content: [{ type: 'text', text: message }], error: { code, message } }])
  }
  if (openTurn !== undefined) steps.push(['turn/end', { turnId: openTurn, reason: 'interrupted' }])
  return steps
}
