// How items read on a terminal: pure functions of the fold's items, checked on folded logs.
import { expect, test } from 'vitest'
import { SessionView } from '@dsh/session-view'
import { drawnElsewhere, finished, itemLines, type LineOptions } from './lines.ts'

const options: LineOptions = {
  outputLines: 3,
  diffLines: 4,
  summaryChars: 60,
  describe: (name, args) => `${name} ${JSON.stringify(args)}`,
  now: () => 10_000,
}
let seq = 0
const event = (type: string, data: unknown, time = 1000) => ({ type, seq: seq++, time, data })
const call = (callId: string, name: string, args: unknown) => event('tool/call', { callId, name, arguments: args })

test('an edit card shows a compact diff, a command card its output tail, exit code and duration', () => {
  const view = SessionView.fold([
    event('turn/start', { turnId: 't1' }),
    call('e1', 'edit', { path: 'a.ts', old_string: 'const a = 1\n', new_string: 'const a = 2\nconst b = 3\n' }),
    event('tool/result', { callId: 'e1', content: [{ type: 'text', text: 'edited' }] }, 1250),
    call('b1', 'bash', { command: 'seq 5; exit 3' }),
    event('tool/result', { callId: 'b1', content: [{ type: 'text', text: '1\n2\n3\n4\n5\n[Exit code 3]' }] }, 3000),
  ])
  const [edit, bash] = view.items.filter((item) => item.kind === 'tool')
  const editText = itemLines(edit!, options).map((line) => line.text)
  expect(editText[0]).toMatch(/^✓ edit .*\(250ms\)$/)
  expect(editText.slice(1)).toEqual(['  edit a.ts', '  - const a = 1', '  + const a = 2', '  + const b = 3'])
  const bashLines = itemLines(bash!, options)
  expect(bashLines[0]!.text).toMatch(/^✗ bash .*\(2\.0s · exit 3\)$/)
  expect(bashLines.filter((line) => line.text.startsWith('  │')).length).toBe(4) // a "more above" line and 3
  expect(finished(edit!)).toBe(true)
})

test('a running card is live with its duration so far; a streaming answer folds its reasoning; hostile text is made printable', () => {
  const view = SessionView.fold([
    event('turn/start', { turnId: 't2' }),
    event('assistant/chunk', { kind: 'reasoning', text: 'think\nmore' }),
    event('assistant/chunk', { kind: 'text', text: 'Hi\x1b]0;title\x07 there\r' }),
  ])
  const answer = view.items.find((item) => item.kind === 'assistant')!
  expect(finished(answer)).toBe(false)
  expect(itemLines(answer, options).map((line) => line.text)).toEqual(['∴ thinking (2 lines, folded)', 'Hi there\\x0d'])
})

test("a task call that started a subagent is drawn by the subagent's line alone, and does not hold the scrollback back", () => {
  const view = SessionView.fold([
    event('turn/start', { turnId: 't3' }),
    call('k1', 'task', { description: 'Count the files', prompt: 'the hidden instructions' }),
    event('tool/dispatched', { callId: 'k1' }),
    event('subagent/start', {
      childSessionId: 'kid',
      kind: 'spawn',
      agentType: 'general',
      description: 'Count the files',
      ceiling: 'workspace-write',
      callId: 'k1',
    }),
  ])
  const [task, card] = view.items.filter((item) => item.kind === 'tool' || item.kind === 'subagent')
  expect([drawnElsewhere(task!), finished(task!)]).toEqual([true, true])
  expect([drawnElsewhere(card!), finished(card!)]).toEqual([false, false])
  expect(itemLines(card!, options)[0]!.text).toBe('⤷ general subagent: Count the files — running')
})
