// The display fold (@dsh/session-view) on a 10k-event session: folding a loaded page whole, and applying one
// live event to a view that already holds it (what a web tab, an ACP stream or the SDK does per event).
// Before the shared fold the web app refolded every loaded event once per animation frame.
import { SessionView } from '@dsh/session-view'
import { ms, summarize } from '../stats.mjs'

const EVENTS = 10_000
const FOLDS = 15
const LIVE = 20_000
const now = () => performance.now()
const usage = { input: 900, output: 120, cacheRead: 4000, cacheWrite: 0 }

/** A realistic mix: a prompt per turn, steps streaming reasoning and text, two parallel calls per step, results. */
function log(count) {
  const events = []
  const push = (type, data) => events.push({ type, seq: events.length, time: 1_700_000_000_000 + events.length, data })
  for (let turn = 0; events.length < count; turn++) {
    push('turn/start', { turnId: `t${turn}` })
    push('user/message', {
      content: [{ type: 'text', text: `task ${turn}: fix the failing test in module ${turn}` }],
      source: 'user',
    })
    for (let step = 0; step < 4; step++) {
      push('step/start', { turnId: `t${turn}`, step })
      for (let chunk = 0; chunk < 8; chunk++)
        push('assistant/chunk', { kind: chunk < 3 ? 'reasoning' : 'text', text: 'some streamed words ' })
      push('assistant/message', {
        content: [{ type: 'text', text: 'some streamed words '.repeat(5) }],
        usage,
        finish: step < 3 ? 'tool-calls' : 'stop',
      })
      if (step === 3) break
      for (const call of ['a', 'b'])
        push('tool/call', {
          callId: `${turn}-${step}-${call}`,
          name: 'bash',
          arguments: { command: `npm test -- ${call}` },
        })
      for (const call of ['a', 'b']) push('tool/dispatched', { callId: `${turn}-${step}-${call}` })
      for (const call of ['a', 'b'])
        push('tool/result', {
          callId: `${turn}-${step}-${call}`,
          content: [{ type: 'text', text: 'PASS\n'.repeat(40) }],
        })
      push('step/end', { turnId: `t${turn}`, step, finish: 'tool-calls' })
    }
    push('turn/end', { turnId: `t${turn}`, reason: 'completed' })
  }
  return events
}

export default async function run() {
  const page = log(EVENTS)
  const more = log(EVENTS + LIVE).slice(page.length)
  const whole = []
  for (let i = 0; i < FOLDS; i++) {
    const started = now()
    SessionView.fold(page)
    whole.push(now() - started)
  }
  // One event costs well under a microsecond: timed in batches of 1000, reported per event.
  const view = SessionView.fold(page)
  const perEvent = []
  for (let at = 0; at + 1000 <= more.length; at += 1000) {
    const started = now()
    for (let i = at; i < at + 1000; i++) view.apply(more[i])
    perEvent.push(((now() - started) / 1000) * 1000)
  }
  const fold = summarize(whole)
  const apply = summarize(perEvent)
  return [
    '## Display fold (bench/session-view)',
    '',
    `A ${page.length.toLocaleString('en')}-event session (turns of four steps, streamed chunks, two parallel bash calls a step); ${FOLDS} whole folds; then ${more.length.toLocaleString('en')} live events applied one by one to the view holding it, timed per 1,000.`,
    '',
    '| what | median | p90 |',
    '|---|---|---|',
    `| fold the ${page.length.toLocaleString('en')}-event page whole (a page load; before, every animation frame with live events) | ${ms(fold.median)} | ${ms(fold.p90)} |`,
    `| apply one live event (and report its changes) | ${apply.median.toFixed(2)} µs | ${apply.p90.toFixed(2)} µs |`,
  ].join('\n')
}
