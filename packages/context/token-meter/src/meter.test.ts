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
    const expected = h.root.tokenMeter.estimateRequest({ system: header.system, tools: header.tools, messages: session.messages() })
    expect(pressure).toEqual({ tokens: expected, window: 50_000, ratio: expected / 50_000, source: 'estimate' })
    expect(expected).toBeGreaterThan(Math.ceil(('a question of some length '.repeat(20).length + 'hello '.repeat(200).length) / 4))
  })

  test('with provider usage, pressure is the last answered request (prompt and answer) plus an estimate of what came after', async () => {
    const output = 'x'.repeat(4000)
    await boot([
      { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: output } }], usage: { input: 1000, cacheRead: 500, cacheWrite: 20, output: 50 } },
      { text: 'done', usage: { input: 30, cacheRead: 2600, output: 5 } },
    ])
    const seen = recordPressure()
    await h.run('echo it')
    const result = h.events('tool/result')[0]!
    const resultTokens = h.root.tokenMeter.estimateMessage({ role: 'tool', content: [{ type: 'tool-result', callId: 'c1', content: result.data.content }] })
    expect(resultTokens).toBeGreaterThanOrEqual(1000)
    expect(seen[1]).toMatchObject({ tokens: 1570 + resultTokens, source: 'usage' })
    expect(h.root.tokenMeter.pressure((await h.agent()).session)).toMatchObject({ tokens: 2635, source: 'usage', window: 50_000 })
  })

  test('a summary logged after the last provider count makes the meter estimate again', async () => {
    await boot([{ text: 'first answer', usage: { input: 40_000, output: 10 } }])
    await h.run('first')
    const session = (await h.agent()).session
    expect(h.root.tokenMeter.pressure(session)).toMatchObject({ tokens: 40_010, ratio: 40_010 / 50_000, source: 'usage' })
    const first = session.all('user/message')[0]!.seq
    const answer = session.last('assistant/message')!.seq
    session.append('user/message', { content: [{ type: 'text', text: 'summary of the start' }], source: 'summary', replaces: { fromSeq: first, toSeq: answer } })
    const after = h.root.tokenMeter.pressure(session)
    expect(after.source).toBe('estimate')
    expect(after.tokens).toBeLessThan(2000)
  })
})
