import { expect, test } from 'vitest'
import { BlockAssembler } from './assemble.ts'
import { LlmError, type StreamChunk } from './vocabulary.ts'

const fold = (chunks: StreamChunk[], provider?: string) => {
  const assembler = new BlockAssembler(provider)
  for (const chunk of chunks) assembler.push(chunk)
  return assembler.result()
}

test('consecutive deltas of one kind join into one block, a change of kind starts a new one', () => {
  const message = fold(
    [
      { type: 'reasoning-delta', text: 'Let me ' },
      { type: 'reasoning-delta', text: 'think.' },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'reasoning-delta', text: 'Again.' },
      { type: 'finish', reason: 'stop' },
    ],
    'deepseek',
  )
  expect(message.content).toEqual([
    { type: 'reasoning', text: 'Let me think.', provider: 'deepseek' },
    { type: 'text', text: 'Hello' },
    { type: 'reasoning', text: 'Again.', provider: 'deepseek' },
  ])
  expect(message.finish).toBe('stop')
})

test('reasoning signatures and redacted parts accumulate on their block', () => {
  const message = fold([
    { type: 'reasoning-delta', text: 'a', signature: 'sig-' },
    { type: 'reasoning-delta', text: 'b', signature: '1', redacted: 'xx' },
    { type: 'finish', reason: 'stop' },
  ])
  expect(message.content).toEqual([{ type: 'reasoning', text: 'ab', signature: 'sig-1', redacted: 'xx' }])
})

test('tool-call deltas join by index, interleaved, and their arguments are parsed once complete', () => {
  const message = fold([
    { type: 'tool-call-delta', index: 0, callId: 'c1', name: 'read', argumentsDelta: '{"pa' },
    { type: 'tool-call-delta', index: 1, callId: 'c2', name: 'bash', argumentsDelta: '{"command":' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: 'th":"a.txt"}' },
    { type: 'tool-call-delta', index: 1, argumentsDelta: '"ls"}' },
    { type: 'finish', reason: 'tool-calls' },
  ])
  expect(message.content).toEqual([
    { type: 'tool-call', callId: 'c1', name: 'read', arguments: { path: 'a.txt' } },
    { type: 'tool-call', callId: 'c2', name: 'bash', arguments: { command: 'ls' } },
  ])
  expect(message.finish).toBe('tool-calls')
})

test('arguments that are not JSON are kept as the raw text, empty ones become {}, a missing id is made up', () => {
  const message = fold([
    { type: 'tool-call-delta', index: 0, callId: 'c1', name: 'edit', argumentsDelta: '{"path": "a.txt", ' },
    { type: 'tool-call-delta', index: 1, name: 'list' },
    { type: 'finish', reason: 'tool-calls' },
  ])
  expect(message.content).toEqual([
    { type: 'tool-call', callId: 'c1', name: 'edit', arguments: '{"path": "a.txt", ' },
    { type: 'tool-call', callId: 'call_1', name: 'list', arguments: {} },
  ])
})

test("usage merges field by field, and the finish chunk's usage replaces it", () => {
  const partial = fold([
    { type: 'usage', usage: { input: 10, output: 0, cacheRead: 0, cacheWrite: 0 } },
    { type: 'usage', usage: { output: 7 } as never },
    { type: 'finish', reason: 'stop' },
  ])
  expect(partial.usage).toEqual({ input: 10, output: 7, cacheRead: 0, cacheWrite: 0 })
  const replaced = fold([
    { type: 'usage', usage: { input: 10, output: 7, cacheRead: 0, cacheWrite: 0 } },
    { type: 'finish', reason: 'stop', usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 } },
  ])
  expect(replaced.usage).toEqual({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4 })
})

test('a stream cut before its finish is aborted, keeping what arrived', () => {
  const assembler = new BlockAssembler()
  assembler.push({ type: 'text-delta', text: 'partial ' })
  assembler.push({ type: 'text-delta', text: 'answer' })
  expect(assembler.isFinished).toBe(false)
  expect(assembler.partialText).toBe('partial answer')
  expect(assembler.result()).toMatchObject({ finish: 'aborted', content: [{ type: 'text', text: 'partial answer' }] })
})

test('a failed finish carries its error, and nothing may follow a finish', () => {
  const assembler = new BlockAssembler()
  assembler.push({ type: 'finish', reason: 'error', error: { code: 'SERVER', message: 'overloaded' } })
  expect(assembler.result()).toMatchObject({ finish: 'error', error: { code: 'SERVER', message: 'overloaded' } })
  expect(() => assembler.push({ type: 'text-delta', text: 'late' })).toThrow(LlmError)
  expect(() => assembler.push({ type: 'text-delta', text: 'late' })).toThrow(
    'stream protocol violated: text-delta after finish',
  )
})
