// The property of recovery (issue #18): over random histories refused by the provider as too long, every
// request sent afterwards keeps each tool call with its results and fits the window the provider stated.
// One real composition (scripted model, real pruner, spill store and request check); histories are
// appended to fresh sessions from a seeded generator, so a failure names its seed.
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import type { Session } from '@dsh/session'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { expectPairsIntact, summaryKind } from './test-support/model.ts'
import type {} from '@dsh/compaction'

const SEEDS = 30

/** mulberry32: small, seeded, good enough to spread histories. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }

/** A closed, well-formed history: turns of steps, calls with results of random sizes, some answers cut. */
function appendHistory(session: Session, rand: () => number): void {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1))
  const text = (chars: number, tag: string) => `${tag} `.padEnd(chars, String.fromCharCode(97 + int(0, 25)))
  let call = 0
  for (let turn = 0, turns = int(1, 4); turn < turns; turn++) {
    const turnId = `t${turn}`
    session.append('turn/start', { turnId })
    session.append('step/start', { turnId, step: 0 })
    session.append('user/message', {
      content: [{ type: 'text', text: text(int(20, 3000), `ask ${turn}`) }],
      source: 'user',
    })
    for (let step = 0, steps = int(1, 6); step < steps; step++) {
      if (step) session.append('step/start', { turnId, step })
      if (rand() < 0.15) {
        // An answer cut mid-stream: logged, not history.
        session.append('assistant/message', {
          content: [{ type: 'text', text: text(int(10, 2000), 'cut') }],
          usage,
          finish: 'error',
          error: { code: 'TRANSPORT', message: 'cut' },
        })
      }
      const calls = Array.from({ length: int(0, 3) }, () => `c${call++}`)
      const content = [
        { type: 'text' as const, text: text(int(5, 400), 'thinking') },
        ...calls.map((callId) => ({ type: 'tool-call' as const, callId, name: 'echo', arguments: { text: 'x' } })),
      ]
      session.append('assistant/message', { content, usage, finish: calls.length ? 'tool-calls' : 'stop' })
      for (const callId of calls) {
        session.append('tool/call', { callId, name: 'echo', arguments: { text: 'x' } })
        session.append('tool/result', {
          callId,
          content: [{ type: 'text', text: text(rand() < 0.3 ? int(5000, 40_000) : int(10, 2000), `result ${callId}`) }],
        })
      }
      session.append('step/end', { turnId, step, finish: calls.length ? 'tool-calls' : 'stop' })
      if (!calls.length) break
    }
    session.append('turn/end', { turnId, reason: 'completed' })
  }
}

let h: Harness
beforeAll(async () => {
  h = await bootComposition({
    // One model per seed: a window one session learns is offered to the process's catalog for that model.
    patch: scriptedPatch(
      {
        config: `{ models: [${Array.from({ length: SEEDS }, (_, i) => `{ id: m${i + 1}, contextWindow: 1000000 }`).join(', ')}] }`,
        fixtureTools: true,
      },
      '- id: compaction\n  config: { summaryMaxOutputTokens: 600 }\n',
    ),
  })
})
afterAll(() => h?.dispose())

test(`over ${SEEDS} random refused histories, every later request keeps calls with their results and fits the stated window`, async () => {
  let recovered = 0
  for (let seed = 1; seed <= SEEDS; seed++) {
    const rand = random(seed)
    const agent = await h.root.agents.create({ cwd: h.workspace, route: { provider: 'scripted', model: `m${seed}` } })
    appendHistory(agent.session, rand)
    // From twice the system prompt and tools (about 8k tokens with the fixture tools) to a mid-size window.
    const window = 16_000 + Math.floor(rand() * 48_000)
    const sent: LlmRequest[] = []
    let refused = false
    const stop = h.root.on('llm/stream', (request, next) => {
      if (request.origin && 'sessionId' in request.origin && request.origin.sessionId === agent.session.id) {
        if (summaryKind(request)) h.root.scriptedLlm.enqueue({ text: `SUMMARY of seed ${seed}` })
        else if (!refused) {
          refused = true
          h.root.scriptedLlm.enqueue({
            error: {
              code: 'CONTEXT_WINDOW_EXCEEDED',
              message: `This model's maximum context length is ${window} tokens.`,
            },
          })
          return next()
        } else h.root.scriptedLlm.enqueue({ text: 'fits now' })
        sent.push(request)
      }
      return next()
    })
    agent.followup('go on')
    const result = (await agent.whenIdle())!
    stop()
    const failed = agent.session.events.filter((event) => event.type === 'context/relief-failed')
    // Either the session found room and completed, or it says it could not (never a silent failure).
    expect(
      result.reason === 'completed' || failed.length > 0,
      `seed ${seed}: ${result.reason} ${JSON.stringify(result.error)}`,
    ).toBe(true)
    if (result.reason === 'completed') recovered++
    for (const request of sent) {
      expectPairsIntact(request.messages)
      expect(
        h.root.tokenMeter.estimateRequest(request),
        `seed ${seed}: a request after the refusal is over the ${window}-token window`,
      ).toBeLessThanOrEqual(window)
    }
    await agent.dispose()
  }
  // The property is about what is sent; most histories must also recover for it to say much.
  expect(recovered).toBeGreaterThanOrEqual(SEEDS * 0.8)
})
