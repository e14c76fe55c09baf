import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { deriveMessages } from '@dsh/session'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { expectPairsIntact, lastText, respondWith, size, summaryKind } from './test-support/model.ts'
import type {} from '@dsh/commands'
import type {} from '@dsh/compaction'

const patch = (models: string, compaction = '{}') =>
  scriptedPatch({ config: `{ models: ${models} }`, fixtureTools: true }, `- id: compaction\n  config: ${compaction}\n`)

let h: Harness
afterEach(async () => h?.dispose())

const block = (i: number, chars: number) => `block ${i}: ` + `${i}`.repeat(chars)
const echo = (i: number, chars: number) => ({ toolCalls: [{ name: 'echo', arguments: { text: block(i, chars) } }] })
const modelRequests = () => h.root.scriptedLlm.requests as LlmRequest[]

describe('compaction at the threshold', () => {
  test('a session driven past the threshold compacts at a step boundary, continues, and the next request is smaller', async () => {
    h = await bootComposition({
      patch: patch('[{ id: scripted-1, contextWindow: 20000 }]', '{ summaryMaxOutputTokens: 1000 }'),
    })
    let steps = 0
    let afterCompaction = 0
    respondWith(h, (request) => {
      if (summaryKind(request)) return { text: 'SUMMARY: the user asked for blocks; each was echoed.' }
      const compacted = h.events('compaction/end').length > 0
      // One more step after the compaction, then an answer (a safety stop at 20 steps).
      if ((compacted && afterCompaction++ >= 1) || steps >= 20) return { text: 'all done' }
      return echo(steps++, 6000)
    })
    const result = await h.run('echo blocks until told otherwise')
    expect(result.reason).toBe('completed')
    const [start] = h.events('compaction/start')
    const [end] = h.events('compaction/end')
    expect(h.events('compaction/start')).toHaveLength(1)
    expect(start!.data).toMatchObject({ trigger: 'threshold', window: 20000 })
    expect(start!.data.tokens / 20000).toBeGreaterThanOrEqual(0.8)
    expect(end!.data).toMatchObject({ ok: true, requests: 1 })
    expect(end!.data.tokensAfter).toBeLessThan(start!.data.tokens / 2)
    expect(afterCompaction).toBe(2)
    const summary = h.events('user/message').find((event) => event.data.source === 'summary')!
    expect(summary.seq).toBe(end!.data.summarySeq)
    expect(summary.data.replaces).toEqual({ fromSeq: start!.data.fromSeq, toSeq: start!.data.toSeq })
    // The summarized events stay in the log.
    expect(h.events('tool/result').length).toBeGreaterThanOrEqual(5)

    const requests = modelRequests()
    const at = requests.findIndex((request) => summaryKind(request))
    const [before, summaryRequest, after] = [requests[at - 1]!, requests[at]!, requests[at + 1]!]
    expect(size(after)).toBeLessThan(size(before))
    expect(after.messages[0]).toEqual({ role: 'user', content: summary.data.content })
    // The summary request repeats the session's system prompt, tools and message prefix (provider caches hit).
    expect(summaryRequest.system).toBe(before.system)
    expect(summaryRequest.tools).toEqual(before.tools)
    // …but forbids calling them: a summary is text.
    expect(summaryRequest.toolChoice).toBe('none')
    expect(before.toolChoice).toBeUndefined()
    const prefix = summaryRequest.messages.slice(0, -1)
    expect(prefix.length).toBeGreaterThan(0)
    expect(prefix.slice(0, before.messages.length)).toEqual(before.messages.slice(0, prefix.length))
    for (const request of requests) expectPairsIntact(request.messages)
  })

  test('a failed compaction is logged with its reason and the turn goes on with the whole history', async () => {
    h = await bootComposition({
      patch: patch('[{ id: scripted-1, contextWindow: 14000 }]', '{ summaryMaxOutputTokens: 1000 }'),
    })
    let steps = 0
    respondWith(h, (request) => {
      if (summaryKind(request)) return { error: { code: 'SERVER', message: 'the summary model is down' } }
      return steps < 7 ? echo(steps++, 6000) : { text: 'finished anyway' }
    })
    const result = await h.run('echo blocks')
    expect(result).toMatchObject({ reason: 'completed', text: 'finished anyway' })
    expect(h.events('compaction/start')).toHaveLength(1) // once per turn, not at every later step
    expect(h.events('compaction/end')[0]!.data).toMatchObject({
      ok: false,
      code: 'SUMMARY_FAILED',
      reason: expect.stringContaining('the summary model is down'),
    })
    expect(h.events('user/message').filter((event) => event.data.source === 'summary')).toHaveLength(0)
    const last = modelRequests().at(-1)!
    expect(last.messages).toEqual(deriveMessages(h.events().slice(0, h.events('assistant/message').at(-1)!.seq)))
    expect(last.messages.filter((message) => message.role === 'tool')).toHaveLength(7)
  })
  test('a summary answered with tool calls despite toolChoice none is refused, and the compaction fails keeping the history', async () => {
    h = await bootComposition({
      patch: patch('[{ id: scripted-1, contextWindow: 14000 }]', '{ summaryMaxOutputTokens: 1000 }'),
    })
    let steps = 0
    respondWith(h, (request) => {
      if (summaryKind(request)) return echo(99, 10)
      return steps < 7 ? echo(steps++, 6000) : { text: 'finished anyway' }
    })
    const result = await h.run('echo blocks')
    expect(result).toMatchObject({ reason: 'completed', text: 'finished anyway' })
    expect(h.events('compaction/end')[0]!.data).toMatchObject({
      ok: false,
      code: 'SUMMARY_FAILED',
      reason: expect.stringContaining("toolChoice 'none'"),
    })
    expect(h.events('user/message').filter((event) => event.data.source === 'summary')).toHaveLength(0)
  })
})

describe('relief before a threshold compaction', () => {
  test('compaction/relieve listeners are asked first, and no summary is made when they bring the session under the threshold', async () => {
    h = await bootComposition({
      patch: patch('[{ id: scripted-1, contextWindow: 14000 }]', '{ summaryMaxOutputTokens: 1000 }'),
    })
    const reliefs: { window: number; targetTokens: number; tokens: number }[] = []
    // A stand-in reliever: shows old results as a gist, oldest first, until the session is under the target.
    h.root.on('compaction/relieve', async (input, next) => {
      reliefs.push({ window: input.window, targetTokens: input.targetTokens, tokens: input.tokens() })
      for (const result of input.agent.session.all('tool/result')) {
        if (input.tokens() < input.targetTokens) break
        input.agent.session.append('tool/pruned', { seq: result.seq, content: [{ type: 'text', text: '(gist)' }] })
      }
      return next()
    })
    let steps = 0
    respondWith(h, () => (h.events('tool/pruned').length || steps >= 20 ? { text: 'relieved' } : echo(steps++, 3000)))
    const result = await h.run('echo blocks until relieved')
    expect(result).toMatchObject({ reason: 'completed', text: 'relieved' })
    expect(reliefs).toHaveLength(1)
    expect(reliefs[0]).toMatchObject({ window: 14000, targetTokens: 0.8 * 14000 })
    expect(reliefs[0]!.tokens).toBeGreaterThanOrEqual(0.8 * 14000)
    expect(h.events('tool/pruned').length).toBeGreaterThan(0)
    expect(h.types()).not.toContain('compaction/start')
    const last = modelRequests().at(-1)!
    expect(JSON.stringify(last.messages)).toContain('(gist)')
    expect(h.root.tokenMeter.estimateRequest(last)).toBeLessThan(0.8 * 14000)
  })
})

describe('compaction when the provider refuses a request as too long', () => {
  /** A provider that counts more tokens than the estimate: it refuses a request past 60% of the window by estimate. */
  function refusePast(share: number, window: number, again = false) {
    let refused = 0
    let steps = 0
    respondWith(h, (request) => {
      if (summaryKind(request)) return { text: 'SUMMARY: blocks were echoed.' }
      const compacted = h.events('compaction/end').some((event) => event.data.ok)
      if ((again && compacted) || (!compacted && h.root.tokenMeter.estimateRequest(request) > share * window)) {
        refused++
        return { error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long' } }
      }
      return compacted ? { text: 'done after compaction' } : echo(steps++, 4000)
    })
    return () => refused
  }

  test('the refused step compacts and is retried once with the compacted history', async () => {
    h = await bootComposition({
      patch: patch('[{ id: scripted-1, contextWindow: 20000 }]', '{ summaryMaxOutputTokens: 1000 }'),
    })
    const refused = refusePast(0.6, 20000)
    const result = await h.run('echo blocks')
    expect(result).toMatchObject({ reason: 'completed', text: 'done after compaction' })
    expect(refused()).toBe(1)
    expect(h.events('compaction/start')).toHaveLength(1)
    expect(h.events('compaction/start')[0]!.data.trigger).toBe('overflow')
    expect(h.events('compaction/end')[0]!.data).toMatchObject({ ok: true })
    // Same step: the refused answer and the retried one sit between the last step/start and its step/end.
    const types = h.types()
    expect(types.slice(types.lastIndexOf('step/start')).filter((type) => type === 'assistant/message')).toHaveLength(2)
    expect(h.events('assistant/message').at(-2)!.data).toMatchObject({
      finish: 'error',
      error: { code: 'CONTEXT_WINDOW_EXCEEDED' },
    })
    const requests = modelRequests()
    const refusedAt = requests.findIndex((request) => summaryKind(request)) - 1
    const retried = requests.at(-1)!
    expect(summaryKind(retried)).toBeUndefined()
    expect(size(retried)).toBeLessThan(size(requests[refusedAt]!))
    expect(retried.messages[0]!.content).toEqual(
      h.events('user/message').find((event) => event.data.source === 'summary')!.data.content,
    )
    for (const request of requests) expectPairsIntact(request.messages)
  })

  test('a step refused again and again is retried only while a relief changes the history, at most maxRecoveriesPerStep times', async () => {
    h = await bootComposition({
      patch: patch(
        '[{ id: scripted-1, contextWindow: 20000 }]',
        '{ summaryMaxOutputTokens: 1000, maxRecoveriesPerStep: 2 }',
      ),
    })
    const refused = refusePast(0.6, 20000, true)
    const result = await h.run('echo blocks')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
    expect(refused()).toBeGreaterThanOrEqual(2)
    expect(refused()).toBeLessThanOrEqual(3)
    const types = h.types()
    const lastStep = types.slice(types.lastIndexOf('step/start'))
    expect(lastStep.filter((type) => type === 'assistant/message').length).toBe(refused())
  })

  test('a refused request with too little history to gain from a summary is not compacted', async () => {
    h = await bootComposition({ patch: patch('[{ id: scripted-1, contextWindow: 128000 }]') })
    h.root.scriptedLlm.enqueue({ error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long' } })
    const result = await h.run('a short prompt')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
    expect(h.types()).not.toContain('compaction/start')
    expect(h.root.scriptedLlm.requests).toHaveLength(1)
  })
})

describe('a summary that would overflow', () => {
  test('is made in parts that each fit the window, then merged', async () => {
    h = await bootComposition({
      patch: patch(
        '[{ id: scripted-1, contextWindow: 200000 }, { id: small, contextWindow: 16000 }]',
        '{ summaryMaxOutputTokens: 1000 }',
      ),
    })
    let steps = 0
    let parts = 0
    respondWith(h, (request) => {
      const kind = summaryKind(request)
      if (kind === 'part') return { text: `PART SUMMARY ${++parts}` }
      if (kind === 'merge') return { text: 'MERGED SUMMARY of every part' }
      if (kind === 'whole') return { text: 'unexpected whole summary' }
      if (request.route.model === 'small') return { text: 'continuing on the small model' }
      return steps < 12 ? echo(steps++, 8000) : { text: 'twelve blocks echoed' }
    })
    await h.run('echo twelve large blocks')
    expect(h.events('compaction/start')).toHaveLength(0)
    const agent = await h.agent()
    agent.setRoute({ provider: 'scripted', model: 'small' })
    const result = await h.run('go on')
    expect(result).toMatchObject({ reason: 'completed', text: 'continuing on the small model' })
    const end = h.events('compaction/end')[0]!.data
    expect(end).toMatchObject({ ok: true })
    expect(parts).toBeGreaterThanOrEqual(2)
    expect(end.requests).toBe(parts + 1)
    const requests = modelRequests()
    const summaries = requests.filter((request) => summaryKind(request))
    for (const request of summaries) {
      expect(h.root.tokenMeter.estimateRequest(request) + 1000).toBeLessThanOrEqual(16000)
      expectPairsIntact(request.messages)
    }
    const merge = summaries.at(-1)!
    expect(summaryKind(merge)).toBe('merge')
    expect(JSON.stringify(merge.messages)).toContain('PART SUMMARY 1')
    expect(JSON.stringify(merge.messages)).toContain(`PART SUMMARY ${parts}`)
    const summary = h.events('user/message').find((event) => event.data.source === 'summary')!
    expect(JSON.stringify(summary.data.content)).toContain('MERGED SUMMARY of every part')
    const last = requests.at(-1)!
    expect(h.root.tokenMeter.estimateRequest(last)).toBeLessThan(16000 * 0.8)
  })
})

describe('/compact', () => {
  test('compacts an idle session now, with the focus the user gave', async () => {
    h = await bootComposition({ patch: patch('[{ id: scripted-1, contextWindow: 128000 }]', '{ keepRecentRatio: 0 }') })
    h.root.scriptedLlm.enqueue(
      echo(0, 200),
      { text: 'first turn done' },
      { text: 'SUMMARY with file names' },
      { text: 'second turn sees the summary' },
    )
    await h.run('first')
    const agent = await h.agent()
    const outcome = await h.root.commands.run(agent, '/compact the file names')
    expect(outcome).toMatchObject({
      handled: true,
      name: 'compact',
      output: expect.stringMatching(/^Compacted the history/),
    })
    expect(h.events('compaction/start')[0]!.data.trigger).toBe('manual')
    const summaryRequest = modelRequests()[2]!
    expect(lastText(summaryRequest)).toMatch(/Focus especially on: the file names$/)
    await h.run('second')
    const next = modelRequests()[3]!
    expect(next.messages.map((message) => message.role)).toEqual(['user', 'user'])
    expect(JSON.stringify(next.messages[0])).toContain('SUMMARY with file names')
  })

  test('during a turn it compacts at the next step boundary', async () => {
    h = await bootComposition({ patch: patch('[{ id: scripted-1, contextWindow: 128000 }]') })
    h.root.scriptedLlm.enqueue(
      { toolCalls: [{ name: 'wait', arguments: { ms: 200, label: 'w' } }] },
      { text: 'SUMMARY' },
      { text: 'done' },
    )
    const agent = await h.agent()
    const waiting = new Promise<void>((resolve) =>
      h.root.on('session/event', (_session, event) => void (event.type === 'tool/dispatched' && resolve())),
    )
    agent.followup('wait a little')
    await waiting
    const outcome = await h.root.commands.run(agent, '/compact')
    expect(outcome).toMatchObject({ handled: true, output: expect.stringContaining('next model request') })
    const result = await agent.whenIdle()
    expect(result?.reason).toBe('completed')
    expect(h.events('compaction/start')[0]!.data.trigger).toBe('manual')
    const types = h.types()
    expect(types.indexOf('compaction/start')).toBeGreaterThan(types.indexOf('tool/result'))
    expect(summaryKind(modelRequests()[1]!)).toBe('whole')
  })

  test('keeps the instructions message verbatim ahead of the summary', async () => {
    h = await bootComposition({
      patch: patch('[{ id: scripted-1, contextWindow: 128000 }]', '{ keepRecentRatio: 0 }'),
      workspaceFiles: { 'AGENTS.md': 'Say please.' },
    })
    h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'SUMMARY' }, { text: 'two' })
    await h.run('first')
    await h.root.commands.run(await h.agent(), '/compact')
    await h.run('second')
    const [instructions, summary, prompt] = modelRequests()[2]!.messages
    expect(JSON.stringify(instructions)).toContain('Say please.')
    expect(JSON.stringify(summary)).toContain('SUMMARY')
    expect(prompt).toEqual({ role: 'user', content: [{ type: 'text', text: 'second' }] })
  })

  test('says why when there is nothing to compact', async () => {
    h = await bootComposition({ patch: patch('[{ id: scripted-1, contextWindow: 128000 }]') })
    const agent = await h.agent()
    const outcome = await h.root.commands.run(agent, '/compact')
    expect(outcome).toMatchObject({
      handled: true,
      error: { code: 'NOTHING_TO_COMPACT', message: expect.stringContaining('empty') },
    })
    expect(h.types()).toEqual([])
  })
})
