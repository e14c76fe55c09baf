// Session log costs: append throughput, resume of 10k and 100k events, and the agent loop's own overhead per
// step with a zero-latency scripted model (so everything measured is harness).
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { ms } from '../stats.mjs'

const PATCH = scriptedPatch(
  { config: '{ record: false }', fixtureTools: true },
  '- id: agent-loop\n  config: { maxSteps: 10000 }\n',
)
const now = () => performance.now()
const message = (i) => ({
  content: [{ type: 'text', text: `message number ${i} with a little text in it` }],
  source: 'user',
})

async function fill(h, count) {
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const started = now()
  for (let i = 0; i < count; i++) session.append('user/message', message(i))
  await session.flush()
  const elapsed = now() - started
  await h.root.sessions.close(session.id)
  return { id: session.id, elapsed }
}

async function resumeTime(home, workspace, id) {
  const h = await bootComposition({ home, workspace, patch: PATCH })
  const started = now()
  const session = await h.root.sessions.resume(id)
  const elapsed = now() - started
  const events = session.length
  await h.dispose()
  return { elapsed, events }
}

async function loopOverhead(steps) {
  const h = await bootComposition({ patch: PATCH })
  const script = Array.from({ length: steps }, (_, i) => ({
    toolCalls: [{ name: 'echo', arguments: { text: `step ${i}` } }],
    pieces: 1,
  }))
  h.root.scriptedLlm.enqueue(...script, { text: 'done', pieces: 1 })
  const started = now()
  const result = await h.run('loop')
  const elapsed = now() - started
  if (result.reason !== 'completed')
    throw new Error(`loop bench ended ${result.reason}: ${JSON.stringify(result.error)}`)
  const events = h.events().length
  await h.dispose()
  return { perStep: elapsed / (steps + 1), events }
}

export default async function run() {
  const h = await bootComposition({ patch: PATCH })
  const appended = await fill(h, 100_000)
  const small = await fill(h, 10_000)
  const big = appended
  const resume10k = await resumeTime(h.home, h.workspace, small.id)
  const resume100k = await resumeTime(h.home, h.workspace, big.id)
  await h.dispose()
  await loopOverhead(20) // warm-up
  const loop = await loopOverhead(200)
  return [
    '## Session log and loop (bench/session)',
    '',
    '| measurement | result | target |',
    '|---|---|---|',
    `| append + flush, 100k events (JSONL persistence) | ${Math.round(100_000 / (appended.elapsed / 1000)).toLocaleString('en')} events/s | — |`,
    `| resume (load, check, repair) of 10k events | ${ms(resume10k.elapsed)} | — |`,
    `| resume (load, check, repair) of 100k events | ${ms(resume100k.elapsed)} | < 1000 ms |`,
    `| agent loop overhead per step (200 tool steps, zero-latency scripted model, ${loop.events} events) | ${ms(loop.perStep)} | < 2 ms |`,
    '',
    'The loop figure is everything the harness does per step: pre-step, logging, request assembly, the invariant check (a fresh fold of the whole log), streaming into the log, the tool pipeline with its flush before the effect, and the JSONL writes.',
  ].join('\n')
}
