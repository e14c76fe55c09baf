import { BlockAssembler, LlmError, type AssembledMessage, type Llm, type LlmRequest } from '@dsh/llm'
import type { Session } from '@dsh/session'

/**
 * Streams one request into the log: every text and reasoning delta as `assistant/chunk` as it arrives, then
 * the whole `assistant/message`. A cut stream keeps what arrived (`interrupted`); a throwing adapter is a
 * `TRANSPORT` failure, not a crash of the turn.
 */
export async function streamIntoLog(llm: Llm, session: Session, request: LlmRequest): Promise<AssembledMessage> {
  const assembler = new BlockAssembler(request.route.provider)
  let failure: LlmError | undefined
  try {
    for await (const chunk of llm.stream(request)) {
      if (chunk.type === 'text-delta' && chunk.text)
        session.append('assistant/chunk', { kind: 'text', text: chunk.text })
      else if (chunk.type === 'reasoning-delta' && chunk.text)
        session.append('assistant/chunk', { kind: 'reasoning', text: chunk.text })
      assembler.push(chunk)
      if (assembler.isFinished || request.signal.aborted) break
    }
  } catch (error) {
    failure =
      error instanceof LlmError
        ? error
        : new LlmError(
            request.signal.aborted ? 'ABORTED' : 'TRANSPORT',
            error instanceof Error ? error.message : String(error),
            {},
            { cause: error },
          )
  }
  const result = assembler.result()
  if (failure && !request.signal.aborted) {
    result.finish = 'error'
    result.error = failure.toJSON()
  } else if (request.signal.aborted && !assembler.isFinished) {
    result.finish = 'aborted'
  }
  if (result.finish === 'stop' && !result.content.length) {
    result.finish = 'error'
    result.error = { code: 'EMPTY_RESPONSE', message: 'the model returned an empty response' }
  }
  session.append('assistant/message', {
    content: result.content,
    usage: result.usage,
    finish: result.finish,
    ...(result.finish === 'aborted' ? { interrupted: true } : {}),
    ...(result.error ? { error: result.error } : {}),
  })
  return result
}

/** Resolves after `ms`, or early (false) when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
