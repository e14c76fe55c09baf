// Code mode against direct calls (bench/code-mode): the same task — read 100 files and report which hold a
// marker — done by a scripted model (zero latency) as 100 direct `read` steps under the `standard` preset,
// and as one `run_code` program under the `code` preset whose 100 `read` calls go through the same pipeline.
// Wall time is the turn's (prompt → idle); requests and input tokens are the model's side: what each request
// carried (system prompt, tool schemas, history), estimated as the token meter does (4 characters a token).
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { estimateHeader, estimateMessage } from '@dsh/token-meter'
import { ms, summarize } from '../stats.mjs'

const FILES = 100
const RUNS = 3
const ESTIMATE = { charsPerToken: 4, imageTokens: 1600, messageOverheadTokens: 4 }

const files = {}
for (let i = 0; i < FILES; i++) {
  const lines = Array.from({ length: 30 }, (_, line) => `line ${line} of file ${i}: some ordinary text to fill it up`)
  if (i % 7 === 0) lines[12] = `MARKER in file ${i}`
  files[`data/f${String(i).padStart(3, '0')}.txt`] = lines.join('\n') + '\n'
}
const paths = Object.keys(files)

const PROGRAM = `const found: string[] = []
for (const path of ${JSON.stringify(paths)}) {
  const text = await read({ path })
  if (text.includes('MARKER')) found.push(path)
}
return found`

function inputTokens(requests) {
  let total = 0
  for (const request of requests) {
    total += estimateHeader({ system: request.system ?? '', tools: request.tools ?? [] }, ESTIMATE)
    for (const message of request.messages) total += estimateMessage(message, ESTIMATE)
  }
  return total
}

async function once(h, mode) {
  const agent = await h.root.agents.create({ cwd: h.workspace })
  if (mode === 'code') h.root.agentPresets.choose(agent.session, 'code', 'client:sdk')
  const steps =
    mode === 'code'
      ? [
          {
            toolCalls: [{ id: 'program', name: 'run_code', arguments: { code: PROGRAM, timeoutMs: 120_000 } }],
            pieces: 1,
          },
        ]
      : paths.map((path, i) => ({ toolCalls: [{ id: `r${i}`, name: 'read', arguments: { path } }], pieces: 1 }))
  h.root.scriptedLlm.requests.length = 0
  h.root.scriptedLlm.enqueue(...steps, { text: 'done', pieces: 1 })
  const started = performance.now()
  agent.followup('which files hold the marker?')
  const result = await agent.whenIdle()
  const wall = performance.now() - started
  const errors = agent.session.events.filter((event) => event.type === 'tool/result' && event.data.error)
  const reads = agent.session.events.filter((event) => event.type === 'tool/call' && event.data.name === 'read')
  await agent.dispose()
  if (result.reason !== 'completed' || errors.length || reads.length !== FILES)
    throw new Error(`code-mode bench (${mode}) failed: ${result.reason}, ${errors[0]?.data.error.message ?? ''}`)
  const requests = [...h.root.scriptedLlm.requests]
  return { wall, requests: requests.length, tokens: inputTokens(requests) }
}

export default async function run() {
  const h = await bootComposition({
    patch: scriptedPatch(
      { config: '{ record: true, models: [{ id: scripted-1, contextWindow: 100000000 }] }' },
      '- id: agent-loop\n  config: { maxSteps: 10000 }\n',
    ),
    workspaceFiles: files,
  })
  const results = { direct: [], code: [] }
  try {
    await once(h, 'code') // warm-up: loads TypeScript and the first worker
    for (let run = 0; run < RUNS; run++) for (const mode of ['direct', 'code']) results[mode].push(await once(h, mode))
  } finally {
    await h.dispose()
  }
  const row = (label, list) => {
    const wall = summarize(list.map((r) => r.wall))
    return `| ${label} | ${ms(wall.median)} | ${list[0].requests} | ${list[0].tokens.toLocaleString('en-US')} |`
  }
  const [direct, code] = [results.direct[0], results.code[0]]
  return [
    '## Code mode (bench/code-mode)',
    '',
    `One task, read ${FILES} files (30 lines each) and say which hold a marker, with a zero-latency scripted model: as ${FILES} direct \`read\` steps (\`standard\` preset) and as one \`run_code\` program (\`code\` preset) making the same ${FILES} \`read\` calls through the pipeline (each logged, checked, redacted, with its own result). Wall is the turn, prompt to idle (median of ${RUNS}, after one warm-up program); input tokens are the sum over the turn's requests of what each carried (system prompt, tool schemas, history), estimated at 4 characters a token as the token meter does.`,
    '',
    '| mode | wall (median) | model requests | input tokens (estimated) |',
    '|---|---|---|---|',
    row(`${FILES} direct \`read\` steps`, results.direct),
    row(`one \`run_code\` program, ${FILES} \`read\` calls`, results.code),
    '',
    `The program costs ${direct.requests / code.requests}× fewer requests and ${(direct.tokens / code.tokens).toFixed(1)}× fewer input tokens: the direct run's history grows by a call and a 30-line result per step and every later request carries it, while the program's results stay in the program (the model reads only its return value). With a real model each saved request is also a saved round trip (seconds, not the milliseconds here). The program's wall time includes a fresh worker thread and type stripping (TypeScript is loaded once per process, in the warm-up).`,
  ].join('\n')
}
