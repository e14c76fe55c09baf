// Time to recover from a provider's "context too long" on a 200-step session: from the refused answer being
// logged to the relieved retry reaching the model (the relief rounds: pruning, shortening, a summary request
// answered at once by the scripted model, the request check). The model's own time is not in it.
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { summarize } from '../stats.mjs'

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
const STEPS = 200

/** 200 steps of one call each, results of 1–12 KB (a few large), in 20 turns. */
function fill(session) {
  let call = 0
  for (let turn = 0; turn < 20; turn++) {
    const turnId = `t${turn}`
    session.append('turn/start', { turnId })
    session.append('user/message', {
      content: [{ type: 'text', text: `Task ${turn}: fix module ${turn}.` }],
      source: 'user',
    })
    for (let step = 0; step < STEPS / 20; step++) {
      session.append('step/start', { turnId, step })
      const callId = `call_${call++}`
      session.append('assistant/message', {
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', callId, name: 'echo', arguments: { text: 'x' } },
        ],
        usage,
        finish: 'tool-calls',
      })
      session.append('tool/call', { callId, name: 'echo', arguments: { text: 'x' } })
      session.append('tool/result', {
        callId,
        content: [{ type: 'text', text: `output ${callId}\n`.padEnd(call % 7 === 0 ? 12_000 : 1_000, 'o') }],
      })
      session.append('step/end', { turnId, step, finish: 'tool-calls' })
    }
    session.append('assistant/message', {
      content: [{ type: 'text', text: `Module ${turn} fixed.` }],
      usage,
      finish: 'stop',
    })
    session.append('turn/end', { turnId, reason: 'completed' })
  }
}

export async function recovery(runs = 5) {
  // One model per run: the window a refusal states is offered to the process's catalog for that model.
  const models = Array.from({ length: runs }, (_, i) => `{ id: m${i}, contextWindow: 1000000 }`).join(', ')
  const h = await bootComposition({ patch: scriptedPatch({ config: `{ models: [${models}] }`, fixtureTools: true }) })
  const samples = []
  let outcome = ''
  for (let i = 0; i < runs; i++) {
    const agent = await h.root.agents.create({ cwd: h.workspace, route: { provider: 'scripted', model: `m${i}` } })
    fill(agent.session)
    let refusedAt = 0
    let retriedAt = 0
    const stop = h.root.on('llm/stream', (request, next) => {
      const last = JSON.stringify(request.messages.at(-1))
      if (last.includes('write a summary of the conversation so far'))
        h.root.scriptedLlm.enqueue({
          text: '## Goal and constraints\nFix the modules.\n## Done\nAll twenty.\n## Next\nNothing.',
        })
      else if (!refusedAt)
        h.root.scriptedLlm.enqueue({
          error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: "This model's maximum context length is 65536 tokens." },
        })
      else {
        retriedAt ||= performance.now()
        h.root.scriptedLlm.enqueue({ text: 'done' })
      }
      return next()
    })
    const onEvent = (session, event) => {
      if (session === agent.session && event.type === 'assistant/message' && event.data.error && !refusedAt)
        refusedAt = performance.now()
    }
    const off = h.root.on('session/event', onEvent)
    agent.followup('one more thing')
    const result = await agent.whenIdle()
    stop()
    off()
    if (result.reason !== 'completed')
      throw new Error(`the benchmark session did not recover: ${result.reason} ${result.error?.message}`)
    samples.push(retriedAt - refusedAt)
    const types = agent.session.events.map((event) => event.type)
    outcome = `${types.filter((type) => type === 'tool/pruned').length} results pruned or shortened, ${types.filter((type) => type === 'compaction/end').length} summary`
    await agent.dispose()
  }
  await h.dispose()
  return { stats: summarize(samples), outcome }
}
