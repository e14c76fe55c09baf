// Code mode in the editor: run_code's call shows the program, and the calls it made name it.
import { expect, test } from 'vitest'
import { UpdateTranslator } from './updates.ts'

test('a run_code call shows its program, and each call the program made names the run_code call', () => {
  const translator = new UpdateTranslator({
    cwd: '/w',
    describe: (name) => ({ kind: name === 'read' ? 'read' : 'other', title: name }),
    diffMaxBytes: 1000,
    toolOutputMaxChars: 1000,
    notices: false,
  })
  const events: [string, unknown][] = [
    ['tool/call', { callId: 'p', name: 'run_code', arguments: { code: "return await read({ path: 'a' })" } }],
    ['tool/call', { callId: 'p.1', name: 'read', arguments: { path: 'a' }, parentCallId: 'p' }],
  ]
  const updates = events.flatMap(([type, data], seq) =>
    translator.translate({ type, seq, time: seq, data } as never, 'live'),
  ) as any[]
  expect(updates.map((update) => [update.sessionUpdate, update.toolCallId, update.title])).toEqual([
    ['tool_call', 'p', 'run_code'],
    ['tool_call', 'p.1', '↳ read (from p)'],
  ])
  expect(updates[0].content).toEqual([
    { type: 'content', content: { type: 'text', text: "```ts\nreturn await read({ path: 'a' })\n```" } },
  ])
  expect(updates[1]._meta).toEqual({ dsh: { parentCallId: 'p' } })
})
