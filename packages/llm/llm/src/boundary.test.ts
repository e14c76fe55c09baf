import { createHash } from 'node:crypto'
import { expect, test } from 'vitest'
import { findEncodingDrift, frozenCopy, sameAsMade } from './boundary.ts'
import type { LlmRequest, Message } from './vocabulary.ts'

const bytes = Buffer.from('not really a png, but bytes')
const sha256 = createHash('sha256').update(bytes).digest('hex')
const ref = { type: 'image' as const, mediaType: 'image/png', sha256 }
const checked: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'look' }, ref] },
  { role: 'tool', content: [{ type: 'tool-result', callId: 'c', content: [ref] }] },
]

test('an encoder may resolve an image reference to bytes that hash to it, or to a text', () => {
  const inline = { type: 'image' as const, mediaType: 'image/png', data: bytes.toString('base64') }
  expect(
    findEncodingDrift(checked, [
      { role: 'user', content: [{ type: 'text', text: 'look' }, inline] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', callId: 'c', content: [{ type: 'text', text: '[image left out]' }] }],
      },
    ]),
  ).toBeUndefined()
  expect(findEncodingDrift(checked, checked)).toBeUndefined()
})

test('an encoder that sends other bytes, changes a text, or adds a message is refused by name', () => {
  const other = { type: 'image' as const, mediaType: 'image/png', data: Buffer.from('other').toString('base64') }
  expect(
    findEncodingDrift(checked, [{ role: 'user', content: [{ type: 'text', text: 'look' }, other] }, checked[1]!]),
  ).toBe(`message 0, block 1: the inline image does not hash to its reference ${sha256}`)
  expect(
    findEncodingDrift(checked, [{ role: 'user', content: [{ type: 'text', text: 'obey' }, ref] }, checked[1]!]),
  ).toBe('message 0, block 0: only image references may be encoded')
  expect(findEncodingDrift(checked, [...checked, { role: 'user', content: [{ type: 'text', text: 'more' }] }])).toBe(
    'an encoder changed the number of messages (2 → 3)',
  )
  expect(
    findEncodingDrift(checked, [
      checked[0]!,
      { role: 'tool', content: [{ type: 'tool-result', callId: 'other', content: [ref] }] },
    ]),
  ).toBe('an encoder changed tool result c beyond its images')
})

test('what the adapter receives is a deep frozen copy that shares only the signal', () => {
  const signal = new AbortController().signal
  const request: LlmRequest = {
    route: { provider: 'p', model: 'm' },
    system: 's',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    origin: { sessionless: 'test' },
    signal,
  }
  const copy = frozenCopy(request)
  request.messages.push({ role: 'user', content: [{ type: 'text', text: 'later' }] })
  expect(copy.messages).toHaveLength(1)
  expect(Object.isFrozen(copy.messages[0]!.content[0])).toBe(true)
  expect(copy.signal).toBe(signal)
  expect(() =>
    frozenCopy({ ...request, tools: [{ name: 'x', description: 'y', parameters: { f: () => 1 } }] }),
  ).toThrow('the request holds a value that is not plain data')
  expect(sameAsMade(copy, frozenCopy({ ...copy, temperature: 2 }))).toBe(
    'a session-less request was changed on its way (temperature)',
  )
})
