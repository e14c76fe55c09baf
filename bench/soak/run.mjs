// Long sessions stay small (issue 29 §4): one `dsh "task"` run of SOAK_STEPS tool steps, each a shell `echo`
// through the bash tool in the default mode (workspace-write, bubblewrap, the network proxy) in a git
// workspace, against the mock DeepSeek server answering at once. Measures the per-step gap (the mock's answer
// ended → the next request arrived) of the first and last 100 steps, the peak RSS of the dsh process, and
// looks for processes left behind: after the run ends, and after `kill -9` of a dsh that is running a
// foreground command and a background job. Loads the machine for minutes: run it on its own.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockServer } from '@dsh/llm-mock-server'
import { ms, summarize } from '../stats.mjs'

const repo = join(fileURLToPath(import.meta.url), '../../..')
const dshBin = join(repo, 'apps/cli/bin/dsh.js')
const peakRss = join(fileURLToPath(import.meta.url), '../../headless/peak-rss.mjs')
// DSH_BENCH_SOAK_STEPS makes a shorter run while working on the benchmark itself; DSH_BENCH_SOAK_PROF=DIR
// runs the dsh child with `--cpu-prof --heap-prof` writing its profiles into DIR (and keeps its samples there).
const SOAK_STEPS = Number(process.env.DSH_BENCH_SOAK_STEPS ?? 2000)
const PROFILE_DIR = process.env.DSH_BENCH_SOAK_PROF
// Each step's output (`seq`, ~1.5 KB), so that with the mock estimating input tokens from the request size
// (characters / 4) and the unknown-model window (128k tokens) the default compaction threshold is passed and
// a summary runs several times in 2,000 steps, as it would for a real model.
const OUTPUT_NUMBERS = 300
const WINDOW = Math.min(100, Math.floor(SOAK_STEPS / 4))

/** Processes whose command line or working directory names one of `paths` (bwrap's arguments name the workspace). */
function leftBehind(paths, except = new Set()) {
  const found = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || except.has(Number(entry)) || Number(entry) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      let cwd = ''
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`)
      } catch {
        // gone, or not ours to read
      }
      if (paths.some((path) => cmdline.includes(path) || cwd.startsWith(path)))
        found.push(`${entry} ${cmdline.replace(/\s+/g, ' ').slice(0, 120)}`)
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

const settle = async (paths) => {
  // The sandbox's pid namespace is torn down by the kernel after its parent dies: give it a moment.
  for (let i = 0; i < 50; i++) {
    if (leftBehind(paths).length === 0) return []
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return leftBehind(paths)
}

function startDsh(llm, home, workspace, task) {
  const rssFile = join(home, 'rss')
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'bench-key-for-the-mock-server',
    DSH_BENCH_RSS_FILE: rssFile,
    DSH_BENCH_MEMORY_FILE: join(PROFILE_DIR ?? home, `samples-${task.replaceAll(' ', '-')}.jsonl`),
  }
  const prof = PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, '--heap-prof', `--heap-prof-dir=${PROFILE_DIR}`]
    : []
  const child = spawn(process.execPath, [...prof, '--import', peakRss, dshBin, task], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  child.stdout.resume()
  const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })))
  const samples = () =>
    readFileSync(join(PROFILE_DIR ?? home, `samples-${task.replaceAll(' ', '-')}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
  return { child, closed, stderr: () => stderr, samples, rssMiB: () => Number(readFileSync(rssFile, 'utf8')) / 1024 }
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-soak-home-'))
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-bench-soak-ws-'))
  // A model the catalog does not list: its window is the adapter's `unknownModel` (128k tokens).
  writeFileSync(
    join(home, 'settings.yaml'),
    `agent.maxSteps: ${SOAK_STEPS + 10}\nmodel.provider: deepseek\nmodel.name: soak-model\n`,
  )
  writeFileSync(join(workspace, 'notes.txt'), 'a file in a git workspace\n')
  const git = (...args) =>
    spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], {
      cwd: workspace,
      stdio: 'ignore',
    })
  git('init', '-q')
  git('add', '-A')
  git('commit', '-qm', 'start')
  const llm = await startMockServer()
  const paths = [workspace, home]
  try {
    // No scripted usage: the mock estimates it from the request's size, so the token meter sees the history
    // grow. A summary request (tools with tool_choice none) gets a summary; the title request a title.
    let step = 0
    const summary = ['Goal and constraints', 'Decisions', 'Done', 'Next', 'Open questions']
      .map((title) => `## ${title}\nRun echo steps until told to stop.`)
      .join('\n\n')
    llm.respondWith((request) => {
      const body = request.body ?? {}
      if (!body.tools?.length) return { text: 'Soak' }
      if (body.tool_choice === 'none') return { text: summary }
      if (step === SOAK_STEPS) return { text: 'Done.' }
      const i = step++
      return {
        toolCalls: [
          {
            id: `s${i}`,
            name: 'bash',
            arguments: { command: `echo step ${i}; seq -s ' ' ${i} ${i + OUTPUT_NUMBERS}` },
          },
        ],
      }
    })
    const started = performance.now()
    const soak = startDsh(llm, home, workspace, 'run the soak')
    const { code } = await soak.closed
    const wall = performance.now() - started
    if (code !== 0) throw new Error(`dsh exited ${code}: ${soak.stderr()}`)
    // The agent's requests offer tools; the session's title request (an auxiliary call) does not.
    const loop = llm.requests.filter((request) => request.body?.tools?.length && request.body.tool_choice !== 'none')
    if (loop[0].body.model !== 'soak-model')
      throw new Error(`the run used model ${loop[0].body.model}, not the 128k-token soak-model the settings name`)
    const summaries = llm.requests.filter(
      (request) => request.body?.tools?.length && request.body.tool_choice === 'none',
    ).length
    if (loop.length !== SOAK_STEPS + 1)
      throw new Error(
        `expected ${SOAK_STEPS + 1} agent requests, the mock saw ${loop.length} (of ${llm.requests.length})`,
      )
    const rss = soak.rssMiB()
    const gaps = loop.slice(1).map((request, i) => request.timing.receivedAt - loop[i].timing.endedAt)
    const first = summarize(gaps.slice(0, WINDOW))
    const last = summarize(gaps.slice(-WINDOW))
    // CPU time of the dsh process per step over a window (the samples nearest its first and last request):
    // less changed by the other load on the machine than the wall-clock gap. The mock's times are this
    // process's performance.now(); the samples carry the wall clock.
    const samples = soak.samples()
    const wallOf = (request) => performance.timeOrigin + request.timing.receivedAt
    const nearest = (wall) =>
      samples.reduce((best, sample) => (Math.abs(sample.wall - wall) < Math.abs(best.wall - wall) ? sample : best))
    const cpuMs = (sample) => (sample.cpu.user + sample.cpu.system) / 1000
    const perStep = (from, to) => (cpuMs(nearest(wallOf(loop[to]))) - cpuMs(nearest(wallOf(loop[from])))) / (to - from)
    const cpuFirst = perStep(0, WINDOW)
    const cpuLast = perStep(SOAK_STEPS - WINDOW, SOAK_STEPS)
    const memAt = (i) => nearest(wallOf(loop[i]))
    const mib = (bytes) => `${(bytes / 1048576).toFixed(0)}`
    const memory = [WINDOW, SOAK_STEPS - WINDOW].map((i) => {
      const m = memAt(i)
      return `step ${i}: RSS ${mib(m.rss)} MiB, heap used ${mib(m.heapUsed)} MiB, external ${mib(m.external)} MiB, array buffers ${mib(m.arrayBuffers)} MiB`
    })
    const afterEnd = await settle(paths)
    const bodies = [loop[WINDOW].body, loop.at(-1).body].map((body) => JSON.stringify(body).length)

    // kill -9 while a foreground command and a background job run inside the sandbox.
    llm.reset()
    llm.respondWith(undefined)
    llm.enqueue(
      { toolCalls: [{ id: 'job', name: 'bash', arguments: { command: 'sleep 120', run_in_background: true } }] },
      { toolCalls: [{ id: 'fg', name: 'bash', arguments: { command: 'sleep 120' } }] },
      { text: 'never reached' },
    )
    const killed = startDsh(llm, home, workspace, 'start and wait')
    for (let i = 0; i < 600 && llm.requests.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    let running = []
    for (let i = 0; i < 100 && running.filter((line) => line.includes('sleep 120')).length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      running = leftBehind(paths, new Set([killed.child.pid]))
    }
    const sleepsBefore = running.filter((line) => line.endsWith(' sleep 120')).length
    killed.child.kill('SIGKILL')
    await killed.closed
    const afterKill = await settle(paths)

    const row = (label, s) => `| ${label} | ${ms(s.median)} | ${ms(s.p90)} | ${ms(s.max)} |`
    return [
      '## Long sessions (bench/soak)',
      '',
      `One \`dsh "task"\` run of ${SOAK_STEPS.toLocaleString('en')} tool steps, each \`echo; seq\` (~1.5 KB of output) through the bash tool in the default mode (workspace-write: bubblewrap and the network proxy), in a git workspace, against \`@dsh/llm-mock-server\` answering at once with usage estimated from the request size (characters / 4), a model with a 128k-token window and the default compaction settings: ${summaries} summary requests; ${(wall / 1000).toFixed(1)} s in all. The gap is from the mock's answer ending to the next request arriving (the tool call, its events, the next request built and sent).`,
      '',
      '| steps | gap median | gap p90 | gap max |',
      '|---|---|---|---|',
      row(`first ${WINDOW}`, first),
      row(`last ${WINDOW}`, last),
      '',
      `Last ${WINDOW} against the first ${WINDOW} (medians): ${(last.median / first.median).toFixed(2)}×. Peak RSS of the dsh process: ${rss.toFixed(1)} MiB. Request body at step ${WINDOW}: ${(bodies[0] / 1024).toFixed(0)} KiB, at the last step: ${(bodies[1] / 1024).toFixed(0)} KiB.`,
      '',
      `CPU time of the dsh process per step (user + system, from once-a-second samples): first ${WINDOW} ${cpuFirst.toFixed(1)} ms, last ${WINDOW} ${cpuLast.toFixed(1)} ms (${(cpuLast / cpuFirst).toFixed(2)}×). Memory (${memory.join('; ')}).`,
      '',
      `Processes left behind (command line or working directory in the run's workspace or home): after the run ended, ${afterEnd.length}${afterEnd.length ? ` (${afterEnd.join('; ')})` : ''}; after \`kill -9\` of a dsh running a foreground \`sleep 120\` and a background job \`sleep 120\` (${sleepsBefore} sleeps seen running before the kill), ${afterKill.length}${afterKill.length ? ` (${afterKill.join('; ')})` : ''}.`,
    ].join('\n')
  } finally {
    await llm.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
  }
}
