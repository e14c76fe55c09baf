import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest, Message } from '@dsh/llm'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type CompositionOptions, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import type {} from '@dsh/compaction'
import type { Pressure } from '@dsh/token-meter'

/** `count` numbered lines of 50 characters: a head and a tail that are easy to recognize. */
const lines = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => `${tag} ${String(i).padStart(4, '0')} ${'x'.repeat(43 - tag.length)}`).join(
    '\n',
  )
const BIG = lines(640, 'big') // 32 KB, about 8k tokens: over the threshold only with what follows it

// summaryMaxOutputTokens is small so that a compaction is possible wherever no pruning relieved the session.
// The budgets below are tuned to the file and shell tools' schemas and prompt sections: the rows of other
// model-facing tools (each adds its schema and section to every request) are left out, so a new tool
// elsewhere does not move these thresholds.
const OTHER_TOOL_ROWS = ['tool-subagent', 'tool-jobs', 'tool-todo', 'plan-mode', 'tool-skill', 'tool-memory']
const patch = (window: number, pruner: string, compaction = '{ summaryMaxOutputTokens: 1000 }') =>
  scriptedPatch(
    { config: `{ models: [{ id: scripted-1, contextWindow: ${window} }] }`, fixtureTools: true },
    `- id: compaction
  config: ${compaction}
- id: tool-result-pruner
  config: ${pruner}
${OTHER_TOOL_ROWS.map((id) => `- id: ${id}\n  disabled: true\n`).join('')}`,
  )

const isSummaryRequest = (request: LlmRequest) =>
  JSON.stringify(request.messages.at(-1)).includes('write a summary of the conversation so far')
const echo = (id: string, chars: number): ScriptedResponse => toolCall(id, 'echo', { text: 'e'.repeat(chars) })

let h: Harness
afterEach(async () => h?.dispose())

/** Boots a composition whose scripted model answers a summary request with a summary and otherwise follows `steps`. */
async function boot(options: CompositionOptions, steps: ScriptedResponse[]): Promise<Harness> {
  h = await bootComposition(options)
  const script = [...steps]
  h.root.on('llm/stream', (request, next) => {
    h.root.scriptedLlm.enqueue(
      isSummaryRequest(request)
        ? { text: 'SUMMARY: files were read and texts echoed.' }
        : (script.shift() ?? { text: 'out of script' }),
    )
    return next()
  })
  return h
}

const requests = () => h.root.scriptedLlm.requests as LlmRequest[]
const resultText = (messages: readonly Message[], callId: string) =>
  messages
    .flatMap((message) => (message.role === 'tool' ? message.content : []))
    .find((result) => result.callId === callId)
    ?.content.map((block) => (block.type === 'text' ? block.text : ''))
    .join('')

/** The read of big.txt (step 0), a small echo (step 1), an answer: the session passes 80% of 15k tokens at step 2 (with the default system prompt and tool schemas). */
const readThenEcho = [toolCall('big', 'read_file', { path: 'big.txt' }), echo('small', 4000), { text: 'done' }]

function expectShortenedView(text: string | undefined, original: string) {
  expect(text!.length).toBeLessThan(1700)
  expect(text).toMatch(/^big 0000 x+\n/)
  expect(text).toContain(`[… ${original.length - 1500} characters omitted …]`)
  expect(text).toMatch(/\nbig 0639 x+$/)
}

describe('pruning the live history before a threshold compaction', () => {
  test('a session over the threshold only because of an old oversized result gets it pruned in place instead of compacted', async () => {
    await boot({ patch: patch(15_000, '{ keepRecentSteps: 1 }'), workspaceFiles: { 'big.txt': BIG } }, readThenEcho)
    const result = await h.run('read big.txt, then echo')
    expect(result).toMatchObject({ reason: 'completed', text: 'done' }) // the invariants plugin checked every request against the log
    expect(h.events('compaction/start')).toEqual([])
    const [pruned, ...more] = h.events('tool/pruned')
    expect(more).toEqual([])
    const read = h.events('tool/result').find((event) => event.data.callId === 'big')!
    expect(pruned!.data).toMatchObject({
      seq: read.seq,
      note: `shortened to relieve the context: ${BIG.length - 1500} of ${BIG.length} characters cut (head and tail kept)`,
    })
    expect(read.data.content).toEqual([{ type: 'text', text: BIG }]) // the log keeps the whole result
    const [first, second, third] = requests()
    expect(resultText(second!.messages, 'big')).toBe(BIG) // at step 1 the session was under the threshold
    expectShortenedView(resultText(third!.messages, 'big'), BIG)
    expect(resultText(third!.messages, 'small')).toBe('e'.repeat(4000))
    expect(third!.messages).toHaveLength(first!.messages.length + 4) // the call keeps its result: no message left out
  })

  test('with provider usage, what pruning cut counts against the provider count and no compaction runs', async () => {
    // The provider counted 11.5k tokens at step 1 (under 80% of 14k); with the echo's result, step 2 is over.
    const counted = (response: ScriptedResponse, input: number): ScriptedResponse => ({
      ...response,
      usage: { input, output: 0 },
    })
    const [read, small, done] = readThenEcho
    await boot({ patch: patch(15_000, '{ keepRecentSteps: 1 }'), workspaceFiles: { 'big.txt': BIG } }, [
      counted(read!, 1500),
      counted(small!, 11_500),
      done!,
    ])
    const sent: Pressure[] = [] // the pressure of each request, as sent (after the relief)
    h.root.on(
      'agent/request',
      async (draft, next) => {
        await next()
        sent.push(h.root.tokenMeter.pressure(draft.agent.session, { window: 15_000, header: draft.request }))
      },
      { prepend: true },
    )
    expect((await h.run('read big.txt, then echo')).reason).toBe('completed')
    expect(h.events('tool/pruned')).toHaveLength(1)
    expect(h.events('compaction/start')).toEqual([])
    expect(sent[2]).toMatchObject({ source: 'usage' })
    expect(sent[2]!.tokens).toBeLessThan(5000) // about 12.5k counted and appended, less the 7.6k the pruning cut
  })

  test('the results of the latest keepRecentSteps steps are never pruned; compaction runs instead', async () => {
    // Step 3 passes the threshold; the read (step 1) is one of the latest two steps, the first echo (step 0) is not.
    await boot({ patch: patch(15_000, '{ keepRecentSteps: 2 }'), workspaceFiles: { 'big.txt': BIG } }, [
      echo('tiny', 10),
      ...readThenEcho,
    ])
    expect((await h.run('read big.txt, then echo')).reason).toBe('completed')
    expect(h.events('tool/pruned')).toEqual([])
    expect(h.events('compaction/start')[0]!.data).toMatchObject({ trigger: 'threshold' })
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true })
  })

  test('a result no longer than minChars is never pruned: nothing is logged and compaction runs', async () => {
    await boot(
      { patch: patch(15_000, `{ keepRecentSteps: 1, minChars: ${BIG.length} }`), workspaceFiles: { 'big.txt': BIG } },
      readThenEcho,
    )
    expect((await h.run('read big.txt, then echo')).reason).toBe('completed')
    expect(h.events('tool/pruned')).toEqual([])
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true })
  })

  test('with live off, the history is never pruned and compaction runs', async () => {
    await boot(
      { patch: patch(15_000, '{ keepRecentSteps: 1, live: false }'), workspaceFiles: { 'big.txt': BIG } },
      readThenEcho,
    )
    expect((await h.run('read big.txt, then echo')).reason).toBe('completed')
    expect(h.events('tool/pruned')).toEqual([])
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true })
  })

  test('when pruning cannot bring the session under the threshold, nothing is pruned and the summary repeats the cached prefix', async () => {
    // a.txt (6 KB) is prunable but saves about 1.1k tokens; at step 8 the session is over 80% of 18k by more than that.
    const small = (i: number) => echo(`e${i}`, 3600)
    const parallel: ScriptedResponse = {
      toolCalls: [1, 2, 3].map((i) => ({ id: `p${i}`, name: 'echo', arguments: { text: 'p'.repeat(3600) } })),
    }
    await boot(
      {
        patch: patch(18_000, '{ keepRecentSteps: 1 }', '{ summaryMaxOutputTokens: 1000, keepRecentRatio: 0.4 }'),
        workspaceFiles: { 'a.txt': lines(120, 'a') },
      },
      [toolCall('a', 'read_file', { path: 'a.txt' }), ...[1, 2, 3, 4, 5, 6].map(small), parallel, { text: 'done' }],
    )
    expect((await h.run('read a.txt, then echo')).reason).toBe('completed')
    expect(h.events('tool/pruned')).toEqual([])
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true, requests: 1 })
    const at = requests().findIndex(isSummaryRequest)
    const [before, summary] = [requests()[at - 1]!, requests()[at]!]
    const prefix = summary.messages.slice(0, -1)
    expect(prefix.length).toBeGreaterThan(2)
    expect(prefix).toEqual(before.messages.slice(0, prefix.length))
  })

  test('a compaction after a pruning summarizes the pruned view the model was sent', async () => {
    // Step 2 prunes big.txt; step 3 reads another large file the relief may not touch: step 4 compacts.
    await boot(
      {
        patch: patch(15_000, '{ keepRecentSteps: 1 }', '{ summaryMaxOutputTokens: 1000, keepRecentRatio: 0 }'),
        workspaceFiles: { 'big.txt': BIG, 'more.txt': lines(720, 'more') },
      },
      [
        toolCall('big', 'read_file', { path: 'big.txt' }),
        echo('small', 4000),
        toolCall('more', 'read_file', { path: 'more.txt' }),
        { text: 'done' },
      ],
    )
    expect((await h.run('read both')).reason).toBe('completed')
    expect(h.events('tool/pruned')).toHaveLength(1)
    const [start] = h.events('compaction/start')
    expect(start!.seq).toBeGreaterThan(h.events('tool/pruned')[0]!.seq)
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true })
    const summary = requests().find(isSummaryRequest)!
    expectShortenedView(resultText(summary.messages, 'big'), BIG)
  })

  test('a session resumed in a new composition keeps the pruned view', async () => {
    const home = tempDir('dsh-home-')
    const workspace = tempDir('dsh-ws-')
    await boot(
      { home, workspace, patch: patch(15_000, '{ keepRecentSteps: 1 }'), workspaceFiles: { 'big.txt': BIG } },
      readThenEcho,
    )
    await h.run('read big.txt, then echo')
    expect(h.events('tool/pruned')).toHaveLength(1)
    const id = (await h.agent()).session.id
    await h.dispose()

    await boot({ home, workspace, patch: patch(15_000, '{ keepRecentSteps: 1 }') }, [{ text: 'still here' }])
    const agent = await h.root.agents.resume(id)
    agent.followup('anything else?')
    expect(await agent.whenIdle()).toMatchObject({ reason: 'completed', text: 'still here' })
    expect(agent.session.all('tool/pruned')).toHaveLength(1) // nothing new was pruned
    expectShortenedView(resultText(requests()[0]!.messages, 'big'), BIG)
    expect(agent.session.all('tool/result').find((event) => event.data.callId === 'big')!.data.content).toEqual([
      { type: 'text', text: BIG },
    ])
  })
})
