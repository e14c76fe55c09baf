// Where a step goes (bench/step, issue #29.1): the real `dsh` (from dist, default settings: workspace-write
// under bubblewrap with the network proxy on) runs a 50-step loop of `echo` through the shell tool in a git
// workspace against the mock DeepSeek server. The child is preloaded with ./trace.mjs, which times every
// Cordis listener, child process, fsync and model request; each step's gap (the end of one answer to the
// start of the next request) is cut out of that timeline and what ran inside it is summed by name.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockServer } from '@dsh/llm-mock-server'
import { BARE_BWRAP, ms, summarize } from '../stats.mjs'

const here = join(fileURLToPath(import.meta.url), '..')
const dshBin = join(here, '../../apps/cli/bin/dsh.js')
const STEPS = 50
const RUNS = Number(process.env.DSH_BENCH_STEP_RUNS ?? 3)
const FILES = 200

/** A committed repository of FILES small files, as a session would find a project. */
function gitWorkspace(dir) {
  mkdirSync(join(dir, 'src'))
  for (let i = 0; i < FILES; i++) writeFileSync(join(dir, 'src', `file${i}.ts`), `export const value${i} = ${i}\n`)
  writeFileSync(join(dir, 'README.md'), '# bench\n')
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], {
      cwd: dir,
      stdio: 'ignore',
    })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'initial')
}

async function runOnce(llm, home, workspace) {
  const traceFile = join(home, `trace-${Date.now()}.jsonl`)
  llm.reset()
  llm.enqueue(
    ...Array.from({ length: STEPS }, (_, i) => ({
      toolCalls: [{ id: `c${i}`, name: 'bash', arguments: { command: `echo step ${i}` } }],
      usage: { input: 50, output: 10 },
    })),
    {
      text: 'Done.',
      usage: { input: 50, output: 2 },
    },
  )
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'bench-key-for-the-mock-server',
    DSH_BENCH_TRACE_FILE: traceFile,
  }
  const child = spawn(process.execPath, ['--import', join(here, 'trace.mjs'), dshBin, 'run the benchmark task'], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  child.stdout.resume()
  const code = await new Promise((resolve) => child.on('close', resolve))
  if (code !== 0) throw new Error(`dsh exited ${code}: ${stderr}`)
  if (llm.requests.length < STEPS + 1)
    throw new Error(`expected ${STEPS + 1} model requests, the mock saw ${llm.requests.length}: ${stderr}`)
  const bodies = llm.requests.slice(1, STEPS + 1).map((request) => JSON.stringify(request.body.messages.at(-1)))
  if (!bodies.every((body, i) => body.includes(`step ${i}`)))
    throw new Error(`a command did not run: ${bodies.find((body, i) => !body.includes(`step ${i}`))}`)
  return readFileSync(traceFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}

/** Each gap's spans, summed by `kind: label` (a listener's own time; a process's wall time inside the gap). */
function gaps(spans) {
  const answers = spans.filter((s) => s.kind === 'answer').sort((a, b) => a.end - b.end)
  const requests = spans.filter((s) => s.kind === 'request').sort((a, b) => a.start - b.start)
  const out = []
  for (const answer of answers.slice(0, STEPS)) {
    const from = answer.end
    const next = requests.find((request) => request.start >= from)
    if (!next) continue
    const to = next.start
    const by = new Map()
    const add = (key, value) => {
      const entry = by.get(key) ?? { ms: 0, count: 0 }
      entry.ms += value
      entry.count++
      by.set(key, entry)
    }
    for (const s of spans) {
      if (s.kind === 'listener' && s.start >= from && s.end <= to) add(`listener ${s.label}`, s.end - s.start - s.inner)
      else if ((s.kind === 'process' || s.kind === 'fsync') && s.end > from && s.start < to)
        add(`${s.kind} ${s.label}`, Math.min(s.end, to) - Math.max(s.start, from))
      if (s.kind === 'process' && s.firstOutput && s.start >= from && s.firstOutput <= to)
        add(`process ${s.label}: spawn → first output`, s.firstOutput - s.start)
    }
    // What no row covers: the loop, the log, building and checking the request, the tool's own JavaScript.
    // git runs inside the Checkpoints listener's own time, so only the other processes are taken off.
    const covered = [...by]
      .filter(
        ([key]) =>
          key.startsWith('listener ') ||
          (key.startsWith('process ') && !key.startsWith('process git') && !key.includes('→')),
      )
      .reduce((sum, [, entry]) => sum + entry.ms, 0)
    by.set('the rest (loop, log, request, tool code)', { ms: Math.max(0, to - from - covered), count: 1 })
    out.push({ total: to - from, by })
  }
  return out
}

/** The load of the moment, in the same run: a bare confined `true` (bwrap's namespaces, no bridge), spawned and waited for. */
function bareBwrap() {
  const times = []
  for (let i = 0; i < 20; i++) {
    const started = performance.now()
    const run = spawnSync('bwrap', [...BARE_BWRAP, 'true'])
    if (run.status !== 0) throw new Error(`bwrap cannot run here: ${run.stderr}`)
    times.push(performance.now() - started)
  }
  return summarize(times).median
}

export async function profile() {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-step-home-'))
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-bench-step-ws-'))
  writeFileSync(join(home, 'settings.yaml'), `agent.maxSteps: ${STEPS + 10}\nsessions.autoTitle: false\n`)
  gitWorkspace(workspace)
  const llm = await startMockServer()
  try {
    await runOnce(llm, home, workspace) // warm-up (file cache, first compile)
    const all = []
    for (let run = 0; run < RUNS; run++) all.push(...gaps(await runOnce(llm, home, workspace)))
    const keys = [...new Set(all.flatMap((gap) => [...gap.by.keys()]))]
    const rows = keys
      .map((key) => {
        const per = all.map((gap) => gap.by.get(key) ?? { ms: 0, count: 0 })
        return {
          key,
          median: summarize(per.map((entry) => entry.ms)).median,
          mean: per.reduce((sum, entry) => sum + entry.ms, 0) / per.length,
          count: per.reduce((sum, entry) => sum + entry.count, 0) / per.length,
        }
      })
      .filter((row) => row.mean >= 0.05)
      .sort((a, b) => b.mean - a.mean)
    return { gap: summarize(all.map((gap) => gap.total)), rows, gaps: all.length, bwrap: bareBwrap() }
  } finally {
    await llm.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
  }
}

export default async function run() {
  const { gap, rows, gaps: count, bwrap } = await profile()
  return [
    '## Where a step goes (bench/step)',
    '',
    `\`dsh "task"\` from \`dist\` with default settings (workspace-write, bubblewrap, the network proxy on) in a git workspace of ${FILES + 1} committed files, against \`@dsh/llm-mock-server\` answering instantly: ${STEPS} steps each running \`echo\` through \`bash\`, ${RUNS} runs after a warm-up, ${count} gaps. A gap is the end of one model answer to the start of the next request; \`bench/step/trace.mjs\` (preloaded into the child) times what runs inside it. Listener rows are a listener's own time (a waterfall's \`next()\` left out); process rows are wall time inside the gap (they overlap the listener that awaits them); the spawn → first output row is how long a process took to start doing its work (for \`bwrap\`: the namespaces, the network bridge's start, then the command); "the rest" is the gap less every listener and every process but git (which runs inside the Checkpoints listener's own time).`,
    '',
    `Per-step gap: median ${ms(gap.median)}, p90 ${ms(gap.p90)}, min ${ms(gap.min)}; a bare confined \`true\` (\`bwrap … -- true\`, no bridge, spawned from the bench in the same run, a measure of the machine's load) took ${ms(bwrap)}, so the gap is ${(gap.median / bwrap).toFixed(1)}× it.`,
    '',
    '| in the gap | per step (mean) | median | calls per step |',
    '|---|---|---|---|',
    ...rows.map(
      (row) => `| ${row.key.replace(/\|/g, '\\|')} | ${ms(row.mean)} | ${ms(row.median)} | ${row.count.toFixed(1)} |`,
    ),
  ].join('\n')
}
