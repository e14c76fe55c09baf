// `history_read` (issue #18 part 4) on the real default composition: the scripted model drives a session
// past the threshold; compaction summarizes; the model reads a summarized event back.
import { afterEach, expect, test } from 'vitest'
import type { LlmRequest, ToolResultBlock } from '@dsh/llm'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/compaction'
import { page } from './page.ts'

let h: Harness
afterEach(async () => h?.dispose())

const isSummary = (request: LlmRequest) =>
  JSON.stringify(request.messages.at(-1)).includes('write a summary of the conversation so far')
const tools = (request: LlmRequest) => request.tools.map((tool) => tool.name)
const block = (i: number) => `MARKER-${i}: ` + `${i}`.repeat(6000)

test('history_read appears only once something was summarized, and returns an event summarized away', async () => {
  h = await bootComposition({
    patch: scriptedPatch(
      { config: '{ models: [{ id: scripted-1, contextWindow: 14000 }] }', fixtureTools: true },
      '- id: compaction\n  config: { summaryMaxOutputTokens: 1000 }\n',
    ),
  })
  let steps = 0
  let readBack = false
  h.root.on('llm/stream', (request: LlmRequest, next) => {
    if (isSummary(request)) h.root.scriptedLlm.enqueue({ text: 'SUMMARY: blocks were echoed.' })
    else if (!h.events('compaction/end').some((event) => event.data.ok))
      h.root.scriptedLlm.enqueue(toolCall(`e${steps}`, 'echo', { text: block(steps++) }))
    else if (!readBack) {
      readBack = true
      h.root.scriptedLlm.enqueue(toolCall('back', 'history_read', { search: 'MARKER-0:' }))
    } else h.root.scriptedLlm.enqueue({ text: 'found it' })
    return next()
  })
  const result = await h.run('echo blocks, then look back')
  expect(result).toMatchObject({ reason: 'completed', text: 'found it' })
  const requests = h.root.scriptedLlm.requests as LlmRequest[]
  const summaryAt = requests.findIndex(isSummary)
  for (const request of requests.slice(0, summaryAt + 1)) expect(tools(request)).not.toContain('history_read')
  expect(tools(requests[summaryAt + 1]!)).toContain('history_read')
  // The first block is in no request after the summary, but history_read gives it back whole, from the log.
  expect(JSON.stringify(requests[summaryAt + 1]!.messages)).not.toContain('MARKER-0:')
  const back = h.toolText('back')
  expect(back).toContain(block(0))
  expect(back).toMatch(/^\[seq \d+, turn 1\] /)
  const seen = requests
    .at(-1)!
    .messages.flatMap((message) => (message.role === 'tool' ? message.content : []))
    .find((r) => (r as ToolResultBlock).callId === 'back')
  expect(JSON.stringify(seen)).toContain('MARKER-0:')
})

test('a page holds whole events within its budget and says where the next page starts', () => {
  const events = [1, 2, 3].map((seq) => ({ seq, turn: 1, text: `event ${seq} ${'x'.repeat(50)}` }))
  const first = page(events, { maxChars: 150 })
  expect(first).toContain('[seq 1, turn 1] event 1')
  expect(first).toContain('[seq 2, turn 1] event 2')
  expect(first).not.toContain('event 3')
  expect(first).toMatch(/\[1 more matching event: call again with fromSeq 3\.\]$/)
  expect(page(events, { maxChars: 150, fromSeq: 3 })).toMatch(/^\[seq 3, turn 1\] event 3/)
  expect(page(events, { maxChars: 150, turn: 2 })).toBe('No summarized event matches in turn 2.')
})
