import { expect } from 'vitest'
import type { LlmRequest, Message } from '@dsh/llm'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import type { Harness } from '@dsh/test-harness'

/** The scripted model answers each request with what `respond` decides from the request itself. */
export function respondWith(h: Harness, respond: (request: LlmRequest) => ScriptedResponse): void {
  h.root.on('llm/stream', (request, next) => {
    h.root.scriptedLlm.enqueue(respond(request))
    return next()
  })
}

export const lastText = (request: Pick<LlmRequest, 'messages'>): string => {
  const last = request.messages.at(-1)
  return last?.role === 'user'
    ? last.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
    : ''
}

/** Which summary request this is, if any (by the default instructions' wording). */
export function summaryKind(request: Pick<LlmRequest, 'messages'>): 'whole' | 'part' | 'merge' | undefined {
  const text = lastText(request)
  if (text.startsWith('Stop the task for a moment and write a summary')) return 'whole'
  if (text.startsWith('Stop here and summarize the part')) return 'part'
  if (text.startsWith('The messages above are summaries of consecutive parts')) return 'merge'
  return undefined
}

/** Every tool call is answered by the tool messages right after it, and every result answers such a call. */
export function expectPairsIntact(messages: readonly Message[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    if (message.role === 'tool') {
      expect(i, 'a tool message opens the history').toBeGreaterThan(0)
      let j = i
      while (messages[j]!.role === 'tool') j--
      const owner = messages[j]!
      const calls =
        owner.role === 'assistant'
          ? owner.content.flatMap((block) => (block.type === 'tool-call' ? [block.callId] : []))
          : []
      expect(calls, `tool result ${message.content[0]!.callId} follows no call of it`).toContain(
        message.content[0]!.callId,
      )
    }
    if (message.role === 'assistant') {
      const calls = message.content.flatMap((block) => (block.type === 'tool-call' ? [block.callId] : []))
      const answered: string[] = []
      for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++)
        answered.push(...messages[j]!.content.map((result) => (result as { callId: string }).callId))
      expect(answered.sort(), 'a tool call lost its result').toEqual([...calls].sort())
    }
  }
}

export const size = (request: Pick<LlmRequest, 'messages'>) => JSON.stringify(request.messages).length
