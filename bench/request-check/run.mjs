// The request check of the llm/stream boundary (docs/architecture.md, "The session log"), per model request,
// at 100 / 1,000 / 5,000 events: as it runs now (the session's incremental, sealed fold; sealed messages
// shared, not cloned) against the check it replaced, in the same run on the same logs: a fresh fold of the
// whole log and a full structured copy of the request, each twice (as the caller made it, after the listeners).
import { loadavg } from 'node:os'
import { findDrift, findDriftAfresh } from '@dsh/invariants'
import { frozenCopy } from '@dsh/llm'
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { summarize } from '../stats.mjs'

const SIZES = [100, 1_000, 5_000]
const SAMPLES = 40
const now = () => performance.now()
const route = { provider: 'scripted', model: 'scripted-1' }
const tools = [
  {
    name: 'read',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
]
const system = 'You are dsh.'.repeat(200)

let call = 0
/** One step as the loop logs it: an answer with a call, the call, its mid-sized result, the step's ends. */
function step(session, turnId, n) {
  const callId = `call_${call++}`
  session.append('step/start', { turnId, step: n })
  session.append('assistant/message', {
    content: [
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', callId, name: 'read', arguments: { path: `src/f${callId}.ts` } },
    ],
    finish: 'tool-calls',
  })
  session.append('tool/call', { callId, name: 'read', arguments: { path: `src/f${callId}.ts` } })
  session.append('tool/result', { callId, content: [{ type: 'text', text: `export const v = ${'x'.repeat(600)}\n` }] })
  session.append('step/end', { turnId, step: n, finish: 'tool-calls' })
}

/** The boundary's check before: a full structured copy of the request and a fresh fold of the log, twice. */
function before(session, request) {
  for (let pass = 0; pass < 2; pass++) {
    const { signal, ...rest } = request
    const copy = Object.freeze({ ...deepFreeze(structuredClone(rest)), signal })
    if (findDriftAfresh(session.events, copy)) throw new Error('the baseline refused a derived request')
  }
}

/** The boundary's check now: `frozenCopy` shares the fold's sealed messages; `findDrift` reads the shared fold. */
function after(session, request) {
  for (let pass = 0; pass < 2; pass++)
    if (findDrift(session, frozenCopy(request))) throw new Error('the check refused a derived request')
}

function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const item of Object.values(value)) deepFreeze(item)
  }
  return value
}

export default async function run() {
  const load = loadavg()[0]
  const h = await bootComposition({ patch: scriptedPatch() })
  const rows = []
  try {
    for (const size of SIZES) {
      const session = await h.root.sessions.create({ cwd: h.workspace })
      session.append('request/header', { system, tools })
      session.append('request/context', { ...route, contextWindow: 1_000_000 })
      session.append('turn/start', { turnId: 't0' })
      session.append('user/message', { content: [{ type: 'text', text: 'Fix the module.' }], source: 'user' })
      let n = 0
      while (session.length < size) step(session, 't0', n++)
      const times = { before: [], after: [] }
      for (let i = 0; i < SAMPLES; i++) {
        step(session, 't0', n++) // a live session: every request follows a new step
        let started = now()
        // The request as the loop builds it; the fold's update belongs to the check's cost here.
        const request = {
          route,
          system,
          tools,
          messages: [...session.messages()],
          signal: new AbortController().signal,
          origin: { sessionId: session.id, purpose: 'turn' },
        }
        after(session, request)
        times.after.push(now() - started)
        started = now()
        before(session, request)
        times.before.push(now() - started)
      }
      const b = summarize(times.before).median
      const a = summarize(times.after).median
      rows.push(
        `| ${size.toLocaleString('en')} | ${session.messages().length} | ${b.toFixed(3)} ms | ${a.toFixed(3)} ms | ${(a / b).toFixed(3)}× |`,
      )
    }
  } finally {
    await h.dispose()
  }
  return [
    '### Request check per model request',
    '',
    `The check at the \`llm/stream\` boundary for one turn request (run twice, as the caller made it and after the listeners), median of ${SAMPLES} requests, each after one more step (answer with a call, its 600-character result). "Before" is the check this replaced, run in the same process on the same logs: a full structured copy of the request and a fresh fold of the whole log per pass. "Now" includes the fold's update for the new step. Load average at start: ${load.toFixed(2)}.`,
    '',
    '| events | messages | before (fresh fold, full copy) | now (shared sealed fold) | now / before |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}
