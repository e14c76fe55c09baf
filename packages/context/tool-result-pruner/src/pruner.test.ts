import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/commands'

const patch = (window: number, pruner = '{}') =>
  scriptedPatch(
    { config: `{ models: [{ id: scripted-1, contextWindow: ${window} }] }`, fixtureTools: true },
    `- id: compaction
  config: { summaryMaxOutputTokens: 1000, keepRecentRatio: 0 }
- id: tool-result-pruner
  config: ${pruner}
`,
  )

const BIG = Array.from({ length: 800 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(40)}`).join('\n') // ~40 KB

let h: Harness
afterEach(async () => h?.dispose())

const isSummaryRequest = (request: LlmRequest) =>
  JSON.stringify(request.messages.at(-1)).includes('write a summary of the conversation so far')
const toolTexts = (request: LlmRequest) =>
  request.messages.flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((result) =>
          result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])),
        )
      : [],
  )

async function bootWithBigResult(window: number, pruner?: string) {
  h = await bootComposition({ patch: patch(window, pruner), workspaceFiles: { 'big.txt': BIG } })
  h.root.on('llm/stream', (request, next) => {
    if (isSummaryRequest(request)) h.root.scriptedLlm.enqueue({ text: 'SUMMARY: big.txt was read.' })
    else if (!h.events('tool/result').length)
      h.root.scriptedLlm.enqueue({ toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'big.txt' } }] })
    else h.root.scriptedLlm.enqueue({ text: 'read it' })
    return next()
  })
}

describe('the tool-result pruner', () => {
  test('an old oversized result is shortened, head and tail kept, in a summary request that would not fit otherwise; the log keeps it whole', async () => {
    await bootWithBigResult(13_000)
    const result = await h.run('read big.txt')
    expect(result.reason).toBe('completed')
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true, requests: 1 })
    const summaryRequest = (h.root.scriptedLlm.requests as LlmRequest[]).find(isSummaryRequest)!
    const [pruned] = toolTexts(summaryRequest)
    expect(pruned!.length).toBeLessThan(1700)
    expect(pruned).toMatch(/^line 0000 x+/)
    expect(pruned).toMatch(/characters omitted/)
    expect(pruned).toMatch(/line 0799 x+$/)
    const logged = h.events('tool/result')[0]!.data.content[0]
    expect(logged).toEqual({ type: 'text', text: BIG })
  })

  test('when the summary request fits, nothing is pruned and it repeats the logged results exactly', async () => {
    await bootWithBigResult(60_000)
    await h.run('read big.txt')
    const outcome = await h.root.commands.run(await h.agent(), '/compact')
    expect(outcome).toMatchObject({ handled: true, output: expect.stringMatching(/^Compacted/) })
    const summaryRequest = (h.root.scriptedLlm.requests as LlmRequest[]).find(isSummaryRequest)!
    expect(toolTexts(summaryRequest)).toEqual([BIG])
  })

  test('with `always`, oversized results are pruned even when the request would fit', async () => {
    await bootWithBigResult(60_000, '{ always: true, keepChars: 500 }')
    await h.run('read big.txt')
    await h.root.commands.run(await h.agent(), '/compact')
    const summaryRequest = (h.root.scriptedLlm.requests as LlmRequest[]).find(isSummaryRequest)!
    const [pruned] = toolTexts(summaryRequest)
    expect(pruned!.length).toBeLessThan(600)
  })
})
