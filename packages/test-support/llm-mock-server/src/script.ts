// Checks scripted replies when they are enqueued, so a typo in a test fails there, loudly, instead of
// turning into a reply nobody meant (a misspelt `txt` would otherwise stream an empty answer).
import { MockServerError } from './options.ts'
import type { MockReply } from './types.ts'

const REPLY_KEYS = [
  'text',
  'reasoning',
  'toolCalls',
  'usage',
  'finish',
  'error',
  'contextOverflow',
  'delayMs',
  'chunkDelayMs',
  'stallAfterChunks',
  'cutAfterChunks',
  'empty',
]
const TOOL_KEYS = ['id', 'name', 'arguments', 'pieces']
const USAGE_KEYS = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning']
const ERROR_KEYS = ['status', 'message', 'type', 'code', 'retryAfter']
const FINISHES = ['stop', 'tool-calls', 'length']

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0
const isChunks = (value: unknown) =>
  typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'))

function checkKeys(value: Record<string, unknown>, known: string[], where: string, problems: string[]) {
  for (const key of Object.keys(value))
    if (!known.includes(key)) problems.push(`${where}: unknown key "${key}" (known: ${known.join(', ')})`)
}

/** Returns the reply when it is well formed, else throws MOCK_BAD_SCRIPT naming every problem and where. */
export function checkReply(value: unknown, where: string): MockReply {
  const problems: string[] = []
  if (!isObject(value)) throw new MockServerError('MOCK_BAD_SCRIPT', `llm-mock-server: ${where} is not an object`)
  checkKeys(value, REPLY_KEYS, where, problems)
  if (value.text !== undefined && !isChunks(value.text)) problems.push(`${where}.text: a string or an array of strings`)
  if (value.reasoning !== undefined && !isChunks(value.reasoning))
    problems.push(`${where}.reasoning: a string or an array of strings`)
  if (value.toolCalls !== undefined) {
    if (!Array.isArray(value.toolCalls)) problems.push(`${where}.toolCalls: an array`)
    else
      value.toolCalls.forEach((call: unknown, i: number) => {
        const at = `${where}.toolCalls[${i}]`
        if (!isObject(call)) return problems.push(`${at}: an object`)
        checkKeys(call, TOOL_KEYS, at, problems)
        if (typeof call.name !== 'string' || !call.name) problems.push(`${at}.name: a non-empty string`)
        if (typeof call.arguments !== 'string' && !isObject(call.arguments))
          problems.push(`${at}.arguments: a JSON string or an object`)
        if (call.id !== undefined && typeof call.id !== 'string') problems.push(`${at}.id: a string`)
        if (call.pieces !== undefined && !(isCount(call.pieces) && call.pieces > 0))
          problems.push(`${at}.pieces: a positive integer`)
      })
  }
  if (value.usage !== undefined) {
    if (!isObject(value.usage)) problems.push(`${where}.usage: an object`)
    else {
      checkKeys(value.usage, USAGE_KEYS, `${where}.usage`, problems)
      for (const key of ['input', 'output'])
        if (!isCount(value.usage[key])) problems.push(`${where}.usage.${key}: a non-negative integer`)
      for (const key of ['cacheRead', 'cacheWrite', 'reasoning'])
        if (value.usage[key] !== undefined && !isCount(value.usage[key]))
          problems.push(`${where}.usage.${key}: a non-negative integer`)
    }
  }
  if (value.finish !== undefined && !FINISHES.includes(value.finish))
    problems.push(`${where}.finish: one of ${FINISHES.join(', ')}`)
  if (value.error !== undefined) {
    if (!isObject(value.error)) problems.push(`${where}.error: an object`)
    else {
      checkKeys(value.error, ERROR_KEYS, `${where}.error`, problems)
      if (!(Number.isInteger(value.error.status) && value.error.status >= 400 && value.error.status <= 599))
        problems.push(`${where}.error.status: an HTTP error status (400-599)`)
      for (const key of ['message', 'type', 'code'])
        if (value.error[key] !== undefined && typeof value.error[key] !== 'string')
          problems.push(`${where}.error.${key}: a string`)
      if (value.error.retryAfter !== undefined && !isCount(value.error.retryAfter))
        problems.push(`${where}.error.retryAfter: seconds, a non-negative integer`)
    }
  }
  for (const key of ['delayMs', 'chunkDelayMs', 'stallAfterChunks', 'cutAfterChunks']) {
    if (value[key] !== undefined && !isCount(value[key])) problems.push(`${where}.${key}: a non-negative integer`)
  }
  for (const key of ['contextOverflow', 'empty'])
    if (value[key] !== undefined && typeof value[key] !== 'boolean') problems.push(`${where}.${key}: a boolean`)
  if (value.error && value.contextOverflow)
    problems.push(`${where}: "error" and "contextOverflow" are exclusive (contextOverflow is a ready-made error)`)
  if (value.stallAfterChunks !== undefined && value.cutAfterChunks !== undefined)
    problems.push(`${where}: "stallAfterChunks" and "cutAfterChunks" are exclusive`)
  if (value.empty && (value.text !== undefined || value.reasoning !== undefined || value.toolCalls !== undefined))
    problems.push(`${where}: "empty" excludes text, reasoning and toolCalls`)
  if (problems.length)
    throw new MockServerError('MOCK_BAD_SCRIPT', `llm-mock-server: bad scripted reply\n  ${problems.join('\n  ')}`)
  return value as MockReply
}

/** A script is one reply or an array of replies (the body of POST /__mock/enqueue, a --script file). */
export function checkScript(value: unknown, where: string): MockReply[] {
  const list = Array.isArray(value) ? value : [value]
  return list.map((reply, i) => checkReply(reply, Array.isArray(value) ? `${where}[${i}]` : where))
}
