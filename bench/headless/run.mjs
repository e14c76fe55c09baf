// The headless product path end to end: the real `dsh` binary (from dist) against the mock DeepSeek server
// answering instantly. Wall time and peak memory of a one-step run and of a 200-step tool loop, and the
// harness overhead per step = (wall − the mock server's own recorded time) / steps.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serverTimeMs, startMockServer } from '@dsh/llm-mock-server'
import { ms, summarize } from '../stats.mjs'

const repo = join(fileURLToPath(import.meta.url), '../../..')
const dshBin = join(repo, 'apps/cli/bin/dsh.js')
const peakRss = join(fileURLToPath(import.meta.url), '../peak-rss.mjs')
const RUNS = 5
const LOOP_STEPS = 200

/** One `dsh "task"` run: wall time (spawn to exit), the child's peak RSS, and the server time of its requests. */
async function measure(llm, home, workspace, replies) {
  llm.reset()
  llm.enqueue(...replies)
  const rssFile = join(home, 'rss')
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'bench-key-for-the-mock-server',
    DSH_BENCH_RSS_FILE: rssFile,
  }
  const started = performance.now()
  const child = spawn(process.execPath, ['--import', peakRss, dshBin, 'run the benchmark task'], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  child.stdout.resume()
  const code = await new Promise((resolve) => child.on('close', resolve))
  const wall = performance.now() - started
  if (code !== 0) throw new Error(`dsh exited ${code}: ${stderr}`)
  if (llm.requests.length !== replies.length)
    throw new Error(`expected ${replies.length} model requests, the mock saw ${llm.requests.length}`)
  return {
    wall,
    rssMiB: Number(readFileSync(rssFile, 'utf8')) / 1024,
    server: serverTimeMs(llm.requests),
    steps: replies.length,
  }
}

function series(samples) {
  const pick = (key) => summarize(samples.map((sample) => sample[key])).median
  const overhead = summarize(samples.map((sample) => (sample.wall - sample.server) / sample.steps)).median
  return { wall: pick('wall'), rss: pick('rssMiB'), server: pick('server'), overhead, steps: samples[0].steps }
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-headless-home-'))
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-bench-headless-ws-'))
  // No title request after the turn (not the run being measured). 200 tool steps exceed the loop's default limit (the agent.maxSteps setting).
  writeFileSync(join(home, 'settings.yaml'), `agent.maxSteps: ${LOOP_STEPS + 10}\nsessions.autoTitle: false\n`)
  writeFileSync(join(workspace, 'notes.txt'), 'a short file the loop reads at every step\n')
  const llm = await startMockServer()
  try {
    const oneStep = [{ text: 'Done.', usage: { input: 50, output: 2 } }]
    const loop = [
      ...Array.from({ length: LOOP_STEPS }, (_, i) => ({
        toolCalls: [{ id: `r${i}`, name: 'read', arguments: { path: 'notes.txt' } }],
        usage: { input: 50, output: 10 },
      })),
      { text: 'Done.', usage: { input: 50, output: 2 } },
    ]
    await measure(llm, home, workspace, oneStep) // warm-up (file cache, first compile)
    const one = []
    const many = []
    for (let i = 0; i < RUNS; i++) one.push(await measure(llm, home, workspace, oneStep))
    for (let i = 0; i < RUNS; i++) many.push(await measure(llm, home, workspace, loop))
    const a = series(one)
    const b = series(many)
    const marginal = (b.wall - b.server - (a.wall - a.server)) / (b.steps - a.steps)
    const row = (label, s) =>
      `| ${label} | ${ms(s.wall)} | ${s.rss.toFixed(1)} MiB | ${ms(s.server)} | ${s.steps} | ${ms(s.overhead)} |`
    return [
      '## Headless runs (bench/headless)',
      '',
      `\`dsh "task"\` spawned from \`dist\` against \`@dsh/llm-mock-server\` (DeepSeek wire format, instant replies), a fresh session each run; median of ${RUNS} runs after one warm-up. The loop's steps each read a small file with the real \`read\` tool.`,
      '',
      '| run | wall | peak RSS | mock server time | model requests | overhead per step = (wall − server) / requests |',
      '|---|---|---|---|---|---|',
      row('one step (a text answer)', a),
      row(`${LOOP_STEPS}-step tool loop`, b),
      '',
      `Marginal cost of one more tool step (process start and boot subtracted, from the two rows): ${ms(marginal)}.`,
    ].join('\n')
  } finally {
    await llm.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
  }
}
