import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { deriveMessages, deriveTurnRequest } from '@dsh/session'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type { ToolOutputData } from './live-output.ts'

async function boot(
  script: ScriptedResponse[],
  rows = '',
  workspaceFiles: Record<string, string> = {},
): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, rows), workspaceFiles })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const pieces = (h: Harness) => h.events('tool/output').map((event) => event.data as ToolOutputData)

// Three lines about 0.7 s apart, the second in colour: short, and slow enough to see pieces before the end.
const THREE_LINES = `echo one; sleep 0.7; printf '\\033[31mtwo\\033[0m\\n'; sleep 0.7; echo three`

test('a running command is logged piece by piece while it runs, stripped for display with the raw colours kept, before its result', async () => {
  const h = await boot([toolCall('b', 'bash', { command: THREE_LINES }), { text: 'done' }])
  await h.run('run it')
  const events = h.events()
  const outputs = events.filter((event) => event.type === 'tool/output')
  const result = events.find((event) => event.type === 'tool/result')!
  expect(outputs.length).toBeGreaterThanOrEqual(2)
  expect(outputs.every((event) => event.seq < result.seq)).toBe(true)
  expect(outputs[0]!.time).toBeLessThan(result.time - 500) // the first line was durable long before the command ended
  expect(pieces(h).map((piece) => piece.index)).toEqual(outputs.map((_, index) => index))
  expect(
    pieces(h)
      .map((piece) => piece.text)
      .join(''),
  ).toBe('one\ntwo\nthree\n')
  expect(pieces(h).some((piece) => piece.text.includes('\x1b'))).toBe(false)
  expect(
    pieces(h)
      .map((piece) => piece.raw ?? piece.text)
      .join(''),
  ).toContain('\x1b[31mtwo\x1b[0m')
  expect(h.toolText('b')).toBe('one\ntwo\nthree')
})

test('the model never sees the live pieces: the derivation ignores them and the boundary check passes the next request', async () => {
  const h = await boot([toolCall('b', 'bash', { command: THREE_LINES }), { text: 'done' }])
  await h.run('run it')
  const events = h.events()
  expect(events.some((event) => event.type === 'tool/output')).toBe(true)
  const without = events.filter((event) => event.type !== 'tool/output')
  expect(deriveMessages(events as any)).toEqual(deriveMessages(without as any))
  expect(deriveTurnRequest(events as any)).toEqual(deriveTurnRequest(without as any))
  expect(h.events('turn/end').at(-1)!.data).toMatchObject({ reason: 'completed' }) // no INVARIANT_VIOLATION on the request after the call
  const second = JSON.stringify(h.root.scriptedLlm.requests[1]!.messages)
  expect(second.split('one\\ntwo\\nthree').length - 1).toBe(1) // once: the tool result
})

test('a credential the command prints is redacted in every live piece and in the log on disk', async () => {
  const secret = 'liveOutputSecret/0123456789abcdefXYZ'
  const saved = process.env.LIVE_OUTPUT_TEST_TOKEN
  process.env.LIVE_OUTPUT_TEST_TOKEN = secret
  onTestFinished(() => {
    if (saved === undefined) delete process.env.LIVE_OUTPUT_TEST_TOKEN
    else process.env.LIVE_OUTPUT_TEST_TOKEN = saved
  })
  // Planted in a file, so that only the command's output carries it (not the call's arguments).
  const h = await boot(
    [toolCall('b', 'bash', { command: `echo start; sleep 0.3; cat deploy.env` }), { text: 'done' }],
    '',
    { 'deploy.env': `token=${secret}\n` },
  )
  await h.run('print it')
  const live = pieces(h)
    .map((piece) => `${piece.text}|${piece.raw ?? ''}`)
    .join('')
  expect(live).toContain('token=«redacted:LIVE_OUTPUT_TEST_TOKEN»')
  expect(live).not.toContain(secret)
  await (await h.agent()).session.flush()
  const dir = join(h.home, 'sessions')
  const logs = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.jsonl'))
  const disk = logs.map((name) => readFileSync(join(dir, name), 'utf8')).join('\n')
  expect(disk).toContain('"tool/output"')
  expect(disk).not.toContain(secret)
})

test('past its cap a call logs no more live output, the last piece says so, and the result keeps the whole output', async () => {
  const h = await boot(
    [toolCall('b', 'bash', { command: 'for i in $(seq 1 200); do echo "line $i"; done' }), { text: 'done' }],
    '- id: tools\n  config: { liveOutputMaxChars: 300 }\n',
  )
  await h.run('print a lot')
  const logged = pieces(h)
  expect(logged.reduce((sum, piece) => sum + (piece.raw ?? piece.text).length, 0)).toBeLessThanOrEqual(300)
  expect(logged.at(-1)!.capped).toBe(true)
  expect(logged.filter((piece) => piece.capped)).toHaveLength(1)
  expect(h.toolText('b')).toContain('line 200')
})

test('liveOutputMaxChars 0 turns live output off', async () => {
  const h = await boot(
    [toolCall('b', 'bash', { command: 'echo hi' }), { text: 'done' }],
    '- id: tools\n  config: { liveOutputMaxChars: 0 }\n',
  )
  await h.run('print')
  expect(h.toolText('b')).toBe('hi')
  expect(h.events('tool/output')).toEqual([])
})
