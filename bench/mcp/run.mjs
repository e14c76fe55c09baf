// MCP tool-call overhead (bench/mcp): a scripted model (zero latency, nothing recorded) calls one tool per
// step through the real pipeline; each call is timed from `tool/dispatched` to `tool/result`. The native
// fixture `echo` (in-process) is compared with the same echo served by an MCP server written with the SDK,
// over stdio, unconfined (`sandbox: false`) and under bubblewrap (the default in workspace-write). The
// server's start (spawn, `initialize`, `tools/list`) is timed from the turn's start to its `mcp/status started`.
import { fileURLToPath } from 'node:url'
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { ms, summarize } from '../stats.mjs'

const SAMPLES = 40
const WARMUP = 5
const SERVER = fileURLToPath(new URL('../../packages/mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))

const patch = scriptedPatch(
  { config: '{ record: false, models: [{ id: scripted-1, contextWindow: 100000000 }] }', fixtureTools: true },
  `- id: agent-loop
  config: { maxSteps: 10000 }
`,
)

const userFile = (sandbox) =>
  `mcpServers:\n  t: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(SERVER)}], trust: allow, sandbox: ${sandbox} }\n`

/** One turn of a fresh agent calling `name` once per step; per-call times of the measured calls and the server's start. */
async function measure(h, name) {
  const dispatched = new Map()
  const calls = []
  const failures = []
  const measured = new Set()
  let started = 0
  let serverStart
  const stop = h.root.on('session/event', (_session, event) => {
    if (event.type === 'tool/dispatched') dispatched.set(event.data.callId, performance.now())
    else if (event.type === 'mcp/status' && event.data.state === 'started') serverStart = performance.now() - started
    else if (event.type === 'tool/result') {
      if (event.data.error) failures.push(event.data.error.message)
      else if (measured.has(event.data.callId)) calls.push(performance.now() - dispatched.get(event.data.callId))
    }
  })
  const steps = Array.from({ length: SAMPLES + WARMUP }, (_, i) => ({
    id: `${name}-${i}`,
    response: { toolCalls: [{ id: `${name}-${i}`, name, arguments: { text: 'hi' } }], pieces: 1 },
  }))
  for (const { id } of steps.slice(WARMUP)) measured.add(id)
  h.root.scriptedLlm.enqueue(...steps.map((step) => step.response), { text: 'done', pieces: 1 })
  const agent = await h.root.agents.create({ cwd: h.workspace })
  started = performance.now()
  agent.followup(`run ${name}`)
  const result = await agent.whenIdle()
  stop()
  await agent.dispose()
  if (result.reason !== 'completed' || failures.length)
    throw new Error(`${name} bench failed (${result.reason}): ${failures[0] ?? JSON.stringify(result.error)}`)
  return { call: summarize(calls), serverStart }
}

async function withComposition(homeFiles, work) {
  const h = await bootComposition({ patch, homeFiles })
  try {
    return await work(h)
  } finally {
    await h.dispose()
  }
}

export default async function run() {
  const native = await withComposition({}, (h) => measure(h, 'echo'))
  const unconfined = await withComposition({ 'mcp.yaml': userFile(false) }, (h) => measure(h, 'mcp__t__echo'))
  const confined = await withComposition({ 'mcp.yaml': userFile(true) }, (h) => measure(h, 'mcp__t__echo'))
  const row = (label, { call, serverStart }) =>
    `| ${label} | ${ms(call.median)} | ${ms(call.p90)} | ${serverStart === undefined ? '—' : ms(serverStart)} |`
  return [
    '## MCP tool calls (bench/mcp)',
    '',
    `One tool call per step (${SAMPLES} measured after ${WARMUP} warm-up), timed from \`tool/dispatched\` to \`tool/result\`; the scripted model costs nothing. The MCP server is the SDK test server (\`packages/mcp/mcp-client/src/fixtures/test-server.mjs\`) over stdio; its start is the agent's first step (spawn, \`initialize\`, \`tools/list\`, tools registered).`,
    '',
    '| tool | call median | call p90 | server start |',
    '|---|---|---|---|',
    row('native `echo` (fixture, in-process)', native),
    row('MCP `echo`, stdio, `sandbox: false`', unconfined),
    row('MCP `echo`, stdio, under bubblewrap', confined),
    '',
    `Median overhead per call over the native tool: ${ms(unconfined.call.median - native.call.median)} unconfined, ${ms(confined.call.median - native.call.median)} under bubblewrap (measured on a machine shared with other work: read the medians, not the p90).`,
  ].join('\n')
}
