// Turns a scripted MockReply into a protocol-neutral plan: the exact chunks each part is streamed in, the
// finish reason and the usage. The wire files only dress the plan in each provider's JSON.
import type { MockReply, MockUsage } from './types.ts'

/** Splits on code points (never inside a surrogate pair) into pieces of at most `size` characters. */
export function splitText(text: string, size: number): string[] {
  const chars = Array.from(text)
  const pieces: string[] = []
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''))
  return pieces
}

/** Splits into `count` nearly equal, non-empty pieces (fewer when the text is shorter than `count`). */
export function splitInto(text: string, count: number): string[] {
  const chars = Array.from(text)
  const n = Math.max(1, Math.min(count, chars.length))
  const pieces: string[] = []
  for (let i = 0; i < n; i++)
    pieces.push(chars.slice(Math.floor((i * chars.length) / n), Math.floor(((i + 1) * chars.length) / n)).join(''))
  return pieces.filter((piece) => piece !== '')
}

export interface PlannedToolCall {
  id: string
  name: string
  /** the whole arguments JSON text */
  arguments: string
  pieces: string[]
}

export interface ReplyPlan {
  reasoning: string[]
  text: string[]
  toolCalls: PlannedToolCall[]
  finish: 'stop' | 'tool-calls' | 'length'
  usage: Required<MockUsage>
}

export interface PlanSettings {
  chunkChars: number
  toolArgumentPieces: number
  charsPerToken: number
  /** bytes of the request body, for the estimated input usage */
  requestBytes: number
  /** the default id of the i-th tool call (each protocol has its own id style) */
  toolCallId(i: number): string
}

const chunksOf = (value: string | string[] | undefined, size: number) =>
  value === undefined ? [] : Array.isArray(value) ? [...value] : splitText(value, size)

export function planReply(reply: MockReply, settings: PlanSettings): ReplyPlan {
  const empty = reply.empty === true
  const reasoning = empty ? [] : chunksOf(reply.reasoning, settings.chunkChars)
  const text = empty ? [] : chunksOf(reply.text, settings.chunkChars)
  const toolCalls = (empty ? [] : (reply.toolCalls ?? [])).map((call, i) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
    return {
      id: call.id ?? settings.toolCallId(i),
      name: call.name,
      arguments: args,
      pieces: splitInto(args, call.pieces ?? settings.toolArgumentPieces),
    }
  })
  const finish = reply.finish ?? (toolCalls.length ? 'tool-calls' : 'stop')
  const tokens = (chars: number) => Math.ceil(chars / settings.charsPerToken)
  const reasoningChars = reasoning.join('').length
  const outputChars =
    reasoningChars +
    text.join('').length +
    toolCalls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0)
  const usage = reply.usage
    ? { cacheRead: 0, cacheWrite: 0, reasoning: 0, ...reply.usage }
    : {
        input: tokens(settings.requestBytes),
        output: tokens(outputChars),
        cacheRead: 0,
        cacheWrite: 0,
        reasoning: tokens(reasoningChars),
      }
  return { reasoning, text, toolCalls, finish, usage }
}
