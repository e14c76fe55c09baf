// Subagent spawn-to-first-request time (bench/subagent): the parent's model (the mock DeepSeek server, in
// this process, so its recorded times share our clock) calls `task`; the child's first request is timed from
// the parent's `tool/dispatched` of that call to the moment the server received the child's request. Split
// at the parent's `subagent/start` (the child's session, agent scope, link and ceiling are made) and then
// the child's first step (the loop: system prompt, tools, the log flushed, the request checked and sent).
import { bootComposition } from '@dsh/test-harness'
import { startMockServer } from '@dsh/llm-mock-server'
import { ms, summarize } from '../stats.mjs'

const SAMPLES = 30
const WARMUP = 5

async function measure(provider, llm) {
  const patch = `
- id: subagents
  name: '${provider}'
- id: agents
  config: { route: { provider: deepseek, model: deepseek-v4-flash } }
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-retry
  config: { maxRetries: 0 }
`
  const h = await bootComposition({ patch })
  await h.root.credentials.set('DEEPSEEK_API_KEY', 'sk-bench-subagent-0123456789')
  const total = []
  const made = []
  const firstStep = []
  try {
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const marks = {}
      const stop = h.root.on('session/event', (_session, event) => {
        if (event.type === 'tool/dispatched' && event.data.callId === `t${i}`) marks.dispatched = performance.now()
        if (event.type === 'subagent/start') marks.started = performance.now()
      })
      const before = llm.requests.length
      llm.enqueue(
        {
          toolCalls: [{ id: `t${i}`, name: 'task', arguments: { description: 'bench', prompt: 'say ok' } }],
          usage: { input: 10, output: 5 },
        },
        { text: 'ok', usage: { input: 10, output: 1 } },
        { text: 'done', usage: { input: 10, output: 1 } },
      )
      const agent = await h.root.agents.create({ cwd: h.workspace })
      agent.followup('delegate')
      const result = await agent.whenIdle()
      stop()
      await agent.dispose()
      if (result?.reason !== 'completed')
        throw new Error(`subagent bench (${provider}) failed: ${JSON.stringify(result)}`)
      const childRequest = llm.requests[before + 1].timing.receivedAt
      if (i < WARMUP) continue
      total.push(childRequest - marks.dispatched)
      made.push(marks.started - marks.dispatched)
      firstStep.push(childRequest - marks.started)
    }
  } finally {
    await h.dispose()
  }
  return { total: summarize(total), made: summarize(made), firstStep: summarize(firstStep) }
}

export default async function run() {
  const llm = await startMockServer()
  try {
    const spawn = await measure('@dsh/subagent-spawn', llm)
    const fork = await measure('@dsh/subagent-fork', llm)
    const row = (name, r) =>
      `| ${name} | ${ms(r.total.median)} | ${ms(r.total.p90)} | ${ms(r.made.median)} | ${ms(r.firstStep.median)} |`
    return [
      '## Subagents (bench/subagent)',
      '',
      `Spawn-to-first-request: a fresh parent per sample calls \`task\` once; ${SAMPLES} samples after ${WARMUP} warm-up ones, against the mock DeepSeek server in the same process (its receive time is on our clock). Timed from the parent's \`tool/dispatched\` of the call to the server receiving the child's first request; "child made" ends at the parent's \`subagent/start\` (the child's session created and persisted, its agent scope, \`subagent/parent\` and \`sandbox/ceiling\` logged), "first step" is the rest (the child's turn and step start, system prompt and tools, the log flushed, the request checked and sent over HTTP).`,
      '',
      '| provider | median | p90 | child made (median) | first step (median) |',
      '|---|---|---|---|---|',
      row('`subagent-spawn` (fresh session)', spawn),
      row("`subagent-fork` (the parent's history copied: one short turn)", fork),
    ].join('\n')
  } finally {
    await llm.close()
  }
}
