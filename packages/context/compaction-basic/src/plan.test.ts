import { describe, expect, test } from 'vitest'
import type { Message } from '@dsh/llm'
import { deriveMessages, type EventKind, type SessionEvent, type SessionEventMap } from '@dsh/session'
import { deriveEntries } from './entries.ts'
import { chooseCut, pack, units } from './plan.ts'
import { expectPairsIntact } from './test-support/model.ts'

/** A small deterministic generator (mulberry32), so a failing history can be reproduced from its seed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const estimate = (message: Message) => Math.ceil(JSON.stringify(message.content).length / 4)

/** Random sessions: turns of prompts, answers and parallel tool calls, compacted now and then. */
function history(seed: number) {
  const rand = random(seed)
  const events: SessionEvent[] = []
  const append = <K extends EventKind>(type: K, data: SessionEventMap[K]) =>
    void events.push({ type, seq: events.length, time: 0, data } as SessionEvent)
  const text = (words: number) => 'w'.repeat(1 + Math.floor(rand() * words))
  if (rand() < 0.5)
    append('user/message', { content: [{ type: 'text', text: 'instructions ' + text(400) }], source: 'instructions' })
  const turns = 3 + Math.floor(rand() * 12)
  let calls = 0
  for (let turn = 0; turn < turns; turn++) {
    append('turn/start', { turnId: `t${turn}` })
    append('user/message', { content: [{ type: 'text', text: text(300) }], source: 'user' })
    for (let step = 0; step < 1 + Math.floor(rand() * 4); step++) {
      const count = rand() < 0.3 ? 0 : 1 + Math.floor(rand() * 3)
      const ids = Array.from({ length: count }, () => `c${calls++}`)
      append('assistant/message', {
        content: [
          { type: 'text', text: text(100) },
          ...ids.map((callId) => ({ type: 'tool-call' as const, callId, name: 'echo', arguments: { n: callId } })),
        ],
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        finish: count ? 'tool-calls' : 'stop',
      })
      for (const callId of ids) append('tool/call', { callId, name: 'echo', arguments: {} })
      for (const callId of ids)
        append('tool/result', { callId, content: [{ type: 'text', text: text(rand() < 0.2 ? 4000 : 200) }] })
      if (!count) break
    }
    append('turn/end', { turnId: `t${turn}`, reason: 'completed' })
  }
  return { events, append, rand }
}

describe('choosing the cut', () => {
  test('over many random histories, a cut never separates a tool call from its result and the fold maps its range back exactly', () => {
    let compactions = 0
    for (let seed = 1; seed <= 300; seed++) {
      const { events, append, rand } = history(seed)
      for (let round = 0; round < 3; round++) {
        const entries = deriveEntries(events)
        expect(entries.map((entry) => entry.message)).toEqual(deriveMessages(events))
        const choice = chooseCut(entries, {
          keepRecentTokens: Math.floor(rand() * 3000),
          keepInstructions: rand() < 0.8,
          estimate,
        })
        if (!choice.ok) break
        const { start, cut, fromSeq, toSeq } = choice.cut
        const summarized = entries.slice(start, cut).map((entry) => entry.message)
        const callIds = summarized.flatMap((message) =>
          message.role === 'assistant'
            ? message.content.flatMap((block) => (block.type === 'tool-call' ? [block.callId] : []))
            : [],
        )
        const resultIds = summarized.flatMap((message) =>
          message.role === 'tool' ? message.content.map((block) => block.callId) : [],
        )
        expect(resultIds.sort(), `seed ${seed}: calls and results on both sides of the cut`).toEqual(callIds.sort())
        const summary = {
          content: [{ type: 'text' as const, text: `summary ${seed}.${round}` }],
          source: 'summary' as const,
          replaces: { fromSeq, toSeq },
        }
        append('user/message', summary)
        const folded = deriveMessages(events)
        const expected = [
          ...entries.slice(0, start).map((entry) => entry.message),
          { role: 'user', content: summary.content },
          ...entries.slice(cut).map((entry) => entry.message),
        ]
        expect(folded, `seed ${seed} round ${round}: the fold does not map the range back`).toEqual(expected)
        expectPairsIntact(folded)
        compactions++
        // More history after the compaction, so a later round cuts through a compacted history.
        append('user/message', { content: [{ type: 'text', text: 'more' }], source: 'user' })
        append('assistant/message', {
          content: [{ type: 'tool-call', callId: `late${seed}.${round}`, name: 'echo', arguments: {} }],
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          finish: 'tool-calls',
        })
        append('tool/result', { callId: `late${seed}.${round}`, content: [{ type: 'text', text: 'r'.repeat(500) }] })
      }
    }
    expect(compactions).toBeGreaterThan(500)
  })

  test('a leading instructions message is kept verbatim ahead of the summary', () => {
    const { events } = history(7)
    if (events[0]!.type !== 'user/message')
      events.unshift({
        type: 'user/message',
        seq: 0,
        time: 0,
        data: { content: [{ type: 'text', text: 'AGENTS.md' }], source: 'instructions' },
      } as SessionEvent)
    events.forEach((event, index) => Object.assign(event, { seq: index }))
    const entries = deriveEntries(events)
    const choice = chooseCut(entries, { keepRecentTokens: 0, keepInstructions: true, estimate })
    expect(choice.ok && choice.cut.start).toBe(1)
    expect(entries[0]!.source).toBe('instructions')
  })

  test('a history that is only an earlier summary has nothing to compact', () => {
    const events = [
      { type: 'user/message', seq: 0, time: 0, data: { content: [{ type: 'text', text: 'old' }], source: 'user' } },
      {
        type: 'user/message',
        seq: 1,
        time: 0,
        data: { content: [{ type: 'text', text: 's' }], source: 'summary', replaces: { fromSeq: 0, toSeq: 0 } },
      },
    ] as SessionEvent[]
    expect(chooseCut(deriveEntries(events), { keepRecentTokens: 0, keepInstructions: true, estimate })).toMatchObject({
      ok: false,
    })
    expect(chooseCut([], { keepRecentTokens: 0, keepInstructions: true, estimate })).toEqual({
      ok: false,
      reason: 'the history is empty',
    })
  })
})

describe('packing parts', () => {
  test('parts hold whole units within the budget, and a unit over the budget stands alone', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const messages = deriveMessages(history(seed).events)
      const budget = 200 + Math.floor(random(seed)() * 2000)
      const chunks = pack(messages, budget, estimate)
      expect(chunks.flat()).toEqual(messages)
      for (const chunk of chunks) {
        expect(chunk[0]!.role).not.toBe('tool')
        expectPairsIntact(chunk)
        const size = chunk.reduce((sum, message) => sum + estimate(message), 0)
        if (size > budget) expect(units(chunk)).toHaveLength(1)
      }
    }
  })
})
