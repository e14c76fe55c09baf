import type { AnySessionEvent, SessionEvent } from '@dsh/session'

/**
 * What every loop's log must look like, whatever failed (docs/architecture.md, "Agents and the turn"): every `turn/start` has exactly one
 * `turn/end` and turns do not overlap; steps open and close inside their turn; every `tool/call`, and every
 * call an `assistant/message` made, has exactly one `tool/result`; every `assistant/message` follows a logged
 * `request/header` and `request/context`. Returns the problems found, empty for a well-formed log.
 */
export function turnStructureProblems(events: readonly SessionEvent[]): string[] {
  const problems: string[] = []
  let turn: string | undefined
  let step: number | undefined
  let header = false
  let context = false
  const owed = new Map<string, number>()
  const results = new Map<string, number>()
  for (const raw of events) {
    const event = raw as AnySessionEvent
    const at = `seq ${event.seq} (${event.type})`
    switch (event.type) {
      case 'turn/start':
        if (turn !== undefined) problems.push(`${at}: turn ${turn} never ended`)
        turn = event.data.turnId
        break
      case 'turn/end':
        if (event.data.turnId !== turn)
          problems.push(`${at}: ends turn ${event.data.turnId}, but the open turn is ${turn ?? 'none'}`)
        if (step !== undefined) problems.push(`${at}: step ${step} never ended`)
        turn = undefined
        step = undefined
        break
      case 'step/start':
        if (turn === undefined || event.data.turnId !== turn) problems.push(`${at}: a step outside its turn`)
        if (step !== undefined) problems.push(`${at}: step ${step} is still open`)
        step = event.data.step
        break
      case 'step/end':
        if (step !== event.data.step || event.data.turnId !== turn)
          problems.push(`${at}: closes step ${event.data.step}, but the open step is ${step ?? 'none'}`)
        step = undefined
        break
      case 'request/header':
        header = true
        break
      case 'request/context':
        context = true
        break
      case 'assistant/message':
        if (!header || !context)
          problems.push(`${at}: an answer to a request no request/header and request/context describe`)
        for (const block of event.data.content) if (block.type === 'tool-call') owed.set(block.callId, event.seq)
        break
      case 'tool/call':
        owed.set(event.data.callId, event.seq)
        break
      case 'tool/result':
        results.set(event.data.callId, (results.get(event.data.callId) ?? 0) + 1)
        if (!owed.has(event.data.callId)) problems.push(`${at}: a result for ${event.data.callId}, which no call made`)
        break
    }
  }
  if (turn !== undefined) problems.push(`turn ${turn} never ended`)
  for (const [callId, seq] of owed) {
    const count = results.get(callId) ?? 0
    if (count !== 1) problems.push(`the call ${callId} (seq ${seq}) has ${count} results`)
  }
  return problems
}
