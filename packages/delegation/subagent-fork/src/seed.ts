import type { ToolCallBlock } from '@dsh/llm'
import type { AnySessionEvent, Session, SessionEvent } from '@dsh/session'

/** The notices a forked child's log gives the calls of the delegating step (their results stay the parent's). */
export interface SeedWords {
  delegated: string
  sibling: string
}

/** The seq of the `assistant/message` that made the call `callId`, or a problem naming what is missing. */
export function forkPoint(events: readonly SessionEvent[], callId: string): number | string {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as AnySessionEvent
    if (
      event.type === 'assistant/message' &&
      event.data.content.some((block) => block.type === 'tool-call' && block.callId === callId)
    )
      return i
  }
  return `the parent's log has no assistant message making the call ${callId}`
}

/**
 * Seeds `child` with the parent's events `0..at` (the assistant message making the delegating call), so the
 * child's history is the parent's byte for byte; then a result for each call of that message and the end of
 * the parent's open step and turn, so the child's own turn starts at a boundary.
 */
export function seedFork(
  child: Session,
  events: readonly SessionEvent[],
  at: number,
  callId: string,
  words: SeedWords,
): void {
  for (const event of events.slice(0, at + 1)) child.append(event.type, event.data as never)
  const message = events[at] as SessionEvent<'assistant/message'>
  for (const block of message.data.content.filter((part): part is ToolCallBlock => part.type === 'tool-call')) {
    child.append('tool/result', {
      callId: block.callId,
      content: [{ type: 'text', text: block.callId === callId ? words.delegated : words.sibling }],
    })
  }
  const step = child.last('step/start')?.data
  const turnId = child.openTurn()
  if (step && step.turnId === turnId)
    child.append('step/end', { turnId: step.turnId, step: step.step, finish: 'tool-calls' })
  if (turnId) child.append('turn/end', { turnId, reason: 'completed' })
}
