// Execution tools through the real pipeline (bench/tools): a scripted model (zero latency, nothing recorded)
// calls one tool per step; each call is timed from `tool/dispatched` to `tool/result` (the pipeline's
// execute waterfalls, the read-before-edit policy, the tool body, the result cap), and the whole step is
// timed too (loop, log, invariant check). `bash` runs `echo` bare (bash-unconfined) and under bubblewrap
// (bash-confined) with no network, with the allow-list proxy bridged in (the default), and making one request
// through it; `read` and `edit` work on a 1 MB file. The bare price of the network namespace is measured on
// `ctx.sandbox` alone (a confined `true`, host network versus a private one).
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { ms, summarize } from '../stats.mjs'

const SAMPLES = 40
const WARMUP = 5

const patch = (shell, rows = '') =>
  scriptedPatch(
    { config: '{ record: false, models: [{ id: scripted-1, contextWindow: 100000000 }] }', fixtureTools: true },
    `- id: agent-loop
  config: { maxSteps: 10000 }
- id: shell
  name: '${shell}'
${rows}`,
  )

/** About 1 MB of source-like text (10,000 lines of ~100 bytes) with one marker line in the middle. */
function megabyte() {
  const lines = Array.from(
    { length: 10_000 },
    (_, i) =>
      `export const value${String(i).padStart(5, '0')} = compute(${i}, 'some fairly ordinary text to fill the line up')`,
  )
  lines[5_000] = 'export const marker = "MARKER-A"'
  return lines.join('\n') + '\n'
}

/**
 * Runs one turn of a fresh agent (so no measurement carries another's history) calling `args(i)` once per
 * step, after the `prelude` calls; returns per-call (dispatch → result) and per-step times of the measured
 * calls.
 */
async function measure(h, name, args, count, prelude = []) {
  const dispatched = new Map()
  const calls = []
  const failures = []
  const measured = new Set()
  const stop = h.root.on('session/event', (_session, event) => {
    if (event.type === 'tool/dispatched') dispatched.set(event.data.callId, performance.now())
    else if (event.type === 'tool/result') {
      if (event.data.error) failures.push(event.data.error.message)
      else if (measured.has(event.data.callId)) calls.push(performance.now() - dispatched.get(event.data.callId))
    }
  })
  const step = (tool, toolArgs) => {
    const id = `${tool}-${Math.random().toString(36).slice(2)}`
    return { id, response: { toolCalls: [{ id, name: tool, arguments: toolArgs }], pieces: 1 } }
  }
  const steps = Array.from({ length: count }, (_, i) => step(name, args(i)))
  for (const { id } of steps.slice(WARMUP)) measured.add(id)
  h.root.scriptedLlm.enqueue(
    ...prelude.map(([tool, toolArgs]) => step(tool, toolArgs).response),
    ...steps.map((s) => s.response),
    { text: 'done', pieces: 1 },
  )
  const agent = await h.root.agents.create({ cwd: h.workspace })
  const started = performance.now()
  agent.followup(`run ${name}`)
  const result = await agent.whenIdle()
  const elapsed = performance.now() - started
  stop()
  await agent.dispose()
  if (result.reason !== 'completed' || failures.length)
    throw new Error(`${name} bench failed (${result.reason}): ${failures[0] ?? JSON.stringify(result.error)}`)
  return { call: summarize(calls), perStep: elapsed / (prelude.length + count + 1) }
}

async function withComposition(shell, work, options = {}) {
  const h = await bootComposition({ patch: patch(shell, options.rows), homeFiles: options.homeFiles })
  try {
    return await work(h)
  } finally {
    await h.dispose()
  }
}

/** A local HTTP server the proxy may reach (`network.allow: [127.0.0.1]`): the request's far end. */
async function localServer() {
  const server = createServer((_req, res) => res.end('ok\n'))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) }
}

/** Median and p90 of spawning a confined `true` for each network, on ctx.sandbox alone (no tool, no log). */
async function namespacePrice(h) {
  const times = {}
  for (const network of [{ kind: 'host' }, { kind: 'none' }]) {
    const { argv } = await h.root.sandbox.confine(['true'], {
      cwd: h.workspace,
      authority: { mode: 'workspace-write', writableRoots: [h.workspace], network },
    })
    const samples = []
    for (let i = 0; i < SAMPLES + WARMUP; i++) {
      const started = performance.now()
      const run = spawnSync(argv[0], argv.slice(1), { stdio: 'ignore' })
      if (run.status !== 0) throw new Error(`confined true failed with network ${network.kind}`)
      if (i >= WARMUP) samples.push(performance.now() - started)
    }
    times[network.kind] = summarize(samples)
  }
  return times
}

const row = (label, { call, perStep }) => `| ${label} | ${ms(call.median)} | ${ms(call.p90)} | ${ms(perStep)} |`

export default async function run() {
  const count = SAMPLES + WARMUP
  const bare = await withComposition('@dsh/bash-unconfined', async (h) => ({
    loop: await measure(h, 'echo', () => ({ text: 'hi' }), count),
    bash: await measure(h, 'bash', () => ({ command: 'echo hi' }), count),
  }))
  const noNetwork = await withComposition(
    '@dsh/bash-confined',
    async (h) => ({
      bash: await measure(h, 'bash', () => ({ command: 'echo hi' }), count),
      namespace: await namespacePrice(h),
    }),
    { rows: '- id: network\n  disabled: true\n' },
  )
  const server = await localServer()
  const confined = await withComposition(
    '@dsh/bash-confined',
    async (h) => {
      const bash = await measure(h, 'bash', () => ({ command: 'echo hi' }), count)
      const request = await measure(
        h,
        'bash',
        () => ({ command: `curl -sS --max-time 10 http://127.0.0.1:${server.port}/` }),
        count,
      )
      writeFileSync(join(h.workspace, 'big.ts'), megabyte())
      const slice = await measure(h, 'read', () => ({ path: 'big.ts', offset: 5_000, limit: 100 }), count)
      const head = await measure(h, 'read', () => ({ path: 'big.ts' }), count)
      const swap = (i) =>
        i % 2
          ? { path: 'big.ts', old_string: 'MARKER-B', new_string: 'MARKER-A' }
          : { path: 'big.ts', old_string: 'MARKER-A', new_string: 'MARKER-B' }
      const edit = await measure(h, 'edit', swap, count, [['read', { path: 'big.ts', offset: 5_000, limit: 1 }]])
      return { bash, request, slice, head, edit }
    },
    { homeFiles: { 'settings.yaml': 'network.allow: ["127.0.0.1"]\n' } },
  )
  await server.close()
  const { host, none } = noNetwork.namespace
  return [
    '## Execution tools (bench/tools)',
    '',
    `One tool call per step, ${SAMPLES} measured calls after ${WARMUP} warm-up ones, zero-latency scripted model. "call" is \`tool/dispatched\` → \`tool/result\` (after the durable flush before the effect: the execute and post-execute waterfalls with every product plugin on them (read-before-edit, spill, …), the tool body, the result cap); "step" is the whole step (loop, log, invariant check, the call), with the agent's history growing through the run.`,
    '',
    '| tool call | call median | call p90 | step (mean) |',
    '|---|---|---|---|',
    row('fixture `echo` (the loop alone, for reference)', bare.loop),
    row('`bash` `echo hi`, bare (bash-unconfined)', bare.bash),
    row(
      '`bash` `echo hi`, under bubblewrap, no network (bash-confined, workspace-write, network row off)',
      noNetwork.bash,
    ),
    row('`bash` `echo hi`, under bubblewrap with the proxy bridged in (the default)', confined.bash),
    row('`bash` `curl` of a local server through the proxy (`network.allow: [127.0.0.1]`)', confined.request),
    row('`read` 1 MB file, lines 5000–5099 (the whole file is scanned for its line count)', confined.slice),
    row('`read` 1 MB file from the top (cut at the 40 KB read cap)', confined.head),
    row('`edit` 1 MB file, one unique replacement (read, replace, atomic write with fsync)', confined.edit),
    '',
    'Under bubblewrap each `bash` call also sets up new pid, ipc, uts and cgroup namespaces, a fresh /dev and /proc and a private /tmp; the difference between the bare and the confined `bash` rows is that price. ' +
      `A private network namespace alone (a confined \`true\` spawned from \`ctx.sandbox\`, no tool) costs ${ms(none.median - host.median)} at the median (${ms(host.median)} with the host network, ${ms(none.median)} without). ` +
      'Every confined command starts under one perl launcher outside bubblewrap (`sandbox-local` `launcher.ts`: descriptors closed, fence locks, cgroups joined, rlimits set); with the proxy, the command then starts under one perl process inside the namespace (`bridge/bridge.pl`: it listens, forks the bridge and becomes the command; a bash launcher and a Node bridge where there is no perl), and without it bwrap runs the command itself: the difference between the "no network" and "proxy bridged in" rows; the `curl` row adds curl itself, the proxy\'s decision (logged as `network/decision`) and the forwarded request. ' +
      'A `read` scans the whole file for its line count whatever range it returns; an `edit` reads the whole file and writes it back atomically (temp file, fsync, rename).',
  ].join('\n')
}
