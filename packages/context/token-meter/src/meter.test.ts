import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import type { Pressure } from './meter.ts'

const PATCH = scriptedPatch({ config: '{ models: [{ id: scripted-1, contextWindow: 50000 }] }', fixtureTools: true })

let h: Harness
afterEach(async () => h?.dispose())

async function boot(script: ScriptedResponse[]) {
  h = await bootComposition({ patch: PATCH })
  h.root.scriptedLlm.enqueue(...script)
  return h
}

/** The meter's reading at each request, as the compaction trigger sees it. */
function recordPressure(): Pressure[] {
  const seen: Pressure[] = []
  h.root.on('agent/request', async (draft, next) => {
    await next()
    seen.push(h.root.tokenMeter.pressure(draft.agent.session, { window: 50_000, header: draft.request }))
  })
  return seen
}

describe('the token meter', () => {
  test('without provider usage, pressure is an estimate of the system prompt, tools and history against the logged window', async () => {
    await boot([{ text: 'hello '.repeat(200) }])
    await h.run('a question of some length '.repeat(20))
    const session = (await h.agent()).session
    const pressure = h.root.tokenMeter.pressure(session)
    const header = session.last('request/header')!.data
    const expected = h.root.tokenMeter.estimateRequest({
      system: header.system,
      tools: header.tools,
      messages: session.messages(),
    })
    expect(pressure).toEqual({ tokens: expected, window: 50_000, ratio: expected / 50_000, source: 'estimate' })
    expect(expected).toBeGreaterThan(
      Math.ceil(('a question of some length '.repeat(20).length + 'hello '.repeat(200).length) / 4),
    )
  })

  test('with provider usage, pressure is the last answered request (prompt and answer) plus an estimate of what came after', async () => {
    const output = 'x'.repeat(4000)
    await boot([
      {
        toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: output } }],
        usage: { input: 1000, cacheRead: 500, cacheWrite: 20, output: 50 },
      },
      { text: 'done', usage: { input: 30, cacheRead: 2600, output: 5 } },
    ])
    const seen = recordPressure()
    await h.run('echo it')
    const result = h.events('tool/result')[0]!
    const resultTokens = h.root.tokenMeter.estimateMessage({
      role: 'tool',
      content: [{ type: 'tool-result', callId: 'c1', content: result.data.content }],
    })
    expect(resultTokens).toBeGreaterThanOrEqual(1000)
    expect(seen[1]).toMatchObject({ tokens: 1570 + resultTokens, source: 'usage' })
    expect(h.root.tokenMeter.pressure((await h.agent()).session)).toMatchObject({
      tokens: 2635,
      source: 'usage',
      window: 50_000,
    })
  })

  test('a summary logged after the last provider count makes the meter estimate again', async () => {
    await boot([{ text: 'first answer', usage: { input: 40_000, output: 10 } }])
    await h.run('first')
    const session = (await h.agent()).session
    expect(h.root.tokenMeter.pressure(session)).toMatchObject({
      tokens: 40_010,
      ratio: 40_010 / 50_000,
      source: 'usage',
    })
    const first = session.all('user/message')[0]!.seq
    const answer = session.last('assistant/message')!.seq
    session.append('user/message', {
      content: [{ type: 'text', text: 'summary of the start' }],
      source: 'summary',
      replaces: { fromSeq: first, toSeq: answer },
    })
    const after = h.root.tokenMeter.pressure(session)
    expect(after.source).toBe('estimate')
    // The system prompt and tools, the summary and nothing of the 40k the provider counted before.
    expect(after.tokens).toBeLessThan(
      h.root.tokenMeter.estimateRequest({
        system: h.events('request/header')[0]!.data.system,
        tools: h.events('request/header')[0]!.data.tools,
        messages: [],
      }) + 100,
    )
  })

  test('a tool/pruned after the last provider count takes what it cut off the counted result', async () => {
    await boot([
      { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x'.repeat(8000) } }] },
      { text: 'done', usage: { input: 5000, output: 5 } },
    ])
    await h.run('echo it')
    const session = (await h.agent()).session
    const result = h.events('tool/result')[0]!
    expect(h.root.tokenMeter.pressure(session)).toMatchObject({ tokens: 5005, source: 'usage' })
    const view = (text: string) =>
      h.root.tokenMeter.estimateMessage({
        role: 'tool',
        content: [{ type: 'tool-result', callId: 'c1', content: [{ type: 'text', text }] }],
      })
    session.append('tool/pruned', {
      seq: result.seq,
      content: [{ type: 'text', text: 'xxxx[… 7992 characters omitted …]xxxx' }],
    })
    const full = view('x'.repeat(8000))
    expect(h.root.tokenMeter.pressure(session)).toMatchObject({
      tokens: 5005 - full + view('xxxx[… 7992 characters omitted …]xxxx'),
      source: 'usage',
    })
    // Pruned again: the change is measured from the view the provider counted, not from the first pruning.
    session.append('tool/pruned', { seq: result.seq, content: [{ type: 'text', text: 'x' }] })
    expect(h.root.tokenMeter.pressure(session).tokens).toBe(5005 - full + view('x'))
  })

  test('a result pruned before the last count and again after it changes the pressure by the difference of the two views', async () => {
    await boot([
      { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x'.repeat(8000) } }] },
      { text: 'done', usage: { input: 5000, output: 5 } },
      { text: 'again', usage: { input: 3000, output: 5 } },
    ])
    await h.run('echo it')
    const session = (await h.agent()).session
    const result = h.events('tool/result')[0]!
    const first = 'x'.repeat(2000)
    session.append('tool/pruned', { seq: result.seq, content: [{ type: 'text', text: first }] })
    await h.run('and now?') // the provider counts the pruned view
    expect(h.root.tokenMeter.pressure(session)).toMatchObject({ tokens: 3005, source: 'usage' })
    session.append('tool/pruned', { seq: result.seq, content: [{ type: 'text', text: 'x' }] })
    const view = (text: string) =>
      h.root.tokenMeter.estimateMessage({
        role: 'tool',
        content: [{ type: 'tool-result', callId: 'c1', content: [{ type: 'text', text }] }],
      })
    expect(h.root.tokenMeter.pressure(session).tokens).toBe(3005 - view(first) + view('x'))
  })
})
