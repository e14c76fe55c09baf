// Background jobs: start → first output poll latency (bench/jobs). A job is started through ctx.jobs the way
// `bash run_in_background` starts one, then read as `job_output` reads it, every POLL_MS, until the line it
// prints is there. Timed from the start call to that read; split at the start call's return (the process
// spawned — under bubblewrap in the confined mode — and `job/started` logged). Nothing talks to a model.
import { bootComposition } from '@dsh/test-harness'
import { ms, summarize } from '../stats.mjs'

const SAMPLES = 30
const WARMUP = 5
const POLL_MS = 1

const sleep = (delay) => new Promise((resolve) => setTimeout(resolve, delay))

async function measure(h, agent, mode) {
  const base = await h.root.sandboxPolicy.authority(agent.session)
  const authority = mode === 'danger-full-access' ? { ...base, mode } : base
  const total = []
  const started = []
  const polls = []
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const t0 = performance.now()
    const job = await h.root.jobs.start({
      session: agent.session,
      scope: agent.scope,
      callId: `${mode}-${i}`,
      command: 'echo ready',
      cwd: h.workspace,
      authority,
    })
    const t1 = performance.now()
    let reads = 0
    for (;;) {
      reads++
      if (h.root.jobs.read(agent.session, job.jobId).text.includes('ready')) break
      if (performance.now() - t0 > 10_000) throw new Error(`jobs bench (${mode}): no output in 10 s`)
      await sleep(POLL_MS)
    }
    const t2 = performance.now()
    // Each job ends before the next starts, so the session's running-jobs limit never counts in.
    while (h.root.jobs.list(agent.session).some((other) => other.jobId === job.jobId && other.status === 'running'))
      await sleep(5)
    if (i < WARMUP) continue
    total.push(t2 - t0)
    started.push(t1 - t0)
    polls.push(reads)
  }
  return { total: summarize(total), started: summarize(started), polls: summarize(polls) }
}

export default async function run() {
  const h = await bootComposition()
  try {
    const agent = await h.root.agents.create({ cwd: h.workspace })
    const confined = await measure(h, agent, 'workspace-write')
    const unconfined = await measure(h, agent, 'danger-full-access')
    const row = (name, r) =>
      `| ${name} | ${ms(r.total.median)} | ${ms(r.total.p90)} | ${ms(r.started.median)} | ${r.polls.median} |`
    return [
      '## Background jobs (bench/jobs)',
      '',
      `Start → first output: \`ctx.jobs.start\` of \`echo ready\` (as \`bash run_in_background\` starts it), then \`ctx.jobs.read\` (what \`job_output\` reads) every ${POLL_MS} ms until the line is there; ${SAMPLES} samples after ${WARMUP} warm-up ones, one session. "started" ends when the start call returns (the process spawned, \`job/started\` logged and flushed); the rest is the command running and its output reaching the job's buffer.`,
      '',
      '| mode | first output (median) | p90 | started (median) | reads (median) |',
      '|---|---|---|---|---|',
      row('`workspace-write` (bubblewrap)', confined),
      row('`danger-full-access` (no sandbox)', unconfined),
      '',
      'The confined row pays for bubblewrap setting up the namespace (and the network bridge) before `echo` runs; a poller such as the model sees the output on its next `job_output` after that. Measured on a machine shared with other work: read the medians.',
    ].join('\n')
  } finally {
    await h.dispose()
  }
}
