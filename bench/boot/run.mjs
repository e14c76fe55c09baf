// Boot cost, two ways. (1) Boot-to-settled of each profile: `dsh --profile <p> --check` mounts the whole tree,
// waits until it settles, lists the rows and exits; baseline `node -e 0`. (2) One-shot boot to the first
// model request: `dsh "say hi"` against the mock server, from process start to the request's arrival, for
// the checkout's launcher (`apps/cli/bin/dsh.js`, ~80 packages of module loading from `dist`) and for the
// bundled launcher (scripts/bundle-cli.mjs, the one `npm pack` ships), built here into a temp folder; wall
// times and the CPU seconds of each run (GNU time). The checkout's launcher starts from apps/cli/pkg when that bundle
// is fresh (decision note 2026-12-02-one-launcher), so the two should be within 10 % of each other (issue #29).
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockServer } from '@dsh/llm-mock-server'
import { bundleCli } from '../../scripts/bundle-cli.mjs'
import { ms, summarize } from '../stats.mjs'

const repo = join(fileURLToPath(import.meta.url), '../../..')
const RUNS = 15
const FIRST_REQUEST_RUNS = 10

function time(args, env) {
  const samples = []
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint()
    const result = spawnSync(process.execPath, args, { env, encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`)
    samples.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  return summarize(samples)
}

/** Spawn → the mock server receives the first request, and spawn → exit, of one `dsh "say hi"`. */
async function firstRequest(launcher, llm, home, workspace) {
  llm.reset()
  llm.enqueue({ text: 'hi', usage: { input: 20, output: 1 } })
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'bench-key-for-the-mock-server',
  }
  // GNU time records the child's CPU seconds: unlike wall time, they barely move when the machine is busy.
  const cpuFile = join(home, 'cpu')
  const started = performance.now()
  const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, process.execPath, launcher, 'say hi'], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const code = await new Promise((resolve) => child.on('close', resolve))
  const wall = performance.now() - started
  if (code !== 0) throw new Error(`${launcher} exited ${code}: ${stderr}`)
  // The first request is the task's; a second one may be the session's title request (auto-title is on by default).
  if (llm.requests.length < 1) throw new Error(`expected a model request, the mock saw none`)
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split(/\s+/).slice(-2).map(Number)
  return { request: llm.requests[0].timing.receivedAt - started, wall, cpu: (user + system) * 1000 }
}

/** Both launchers, alternating run by run, so a change in the machine's load weighs on both alike. */
async function firstRequestSeries(launchers, llm, home, workspace) {
  for (const launcher of launchers) await firstRequest(launcher, llm, home, workspace) // warm-up (file cache)
  const samples = launchers.map(() => [])
  for (let i = 0; i < FIRST_REQUEST_RUNS; i++) {
    for (const [index, launcher] of launchers.entries())
      samples[index].push(await firstRequest(launcher, llm, home, workspace))
  }
  return samples.map((series) => ({
    request: summarize(series.map((s) => s.request)),
    wall: summarize(series.map((s) => s.wall)),
    cpu: summarize(series.map((s) => s.cpu)),
  }))
}

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-boot-'))
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-bench-boot-ws-'))
  const packaged = mkdtempSync(join(tmpdir(), 'dsh-bench-boot-pkg-'))
  // One request per run: no title request after the turn (it is not the run being measured).
  writeFileSync(join(home, 'settings.yaml'), 'sessions.autoTitle: false\n')
  const env = { ...process.env, DSH_HOME: home }
  const llm = await startMockServer()
  try {
    const baseline = time(['-e', '0'], env)
    const rows = [`| \`node -e 0\` (baseline) | ${ms(baseline.median)} | ${ms(baseline.p90)} | 1.0× |`]
    for (const profile of ['headless', 'web', 'sdk', 'acp']) {
      const s = time([join(repo, 'apps/cli/bin/dsh.js'), '--profile', profile, '--check'], env)
      rows.push(
        `| \`dsh --profile ${profile} --check\` | ${ms(s.median)} | ${ms(s.p90)} | ${(s.median / baseline.median).toFixed(1)}× |`,
      )
    }
    const bundle = await bundleCli(packaged)
    const [before, after] = await firstRequestSeries(
      [join(repo, 'apps/cli/bin/dsh.js'), join(packaged, 'bin/dsh.js')],
      llm,
      home,
      workspace,
    )
    const oneShot = (label, s) =>
      `| ${label} | ${ms(s.request.median)} | ${ms(s.request.p90)} | ${ms(s.wall.median)} | ${ms(s.cpu.median)} |`
    return [
      '## Boot (bench/boot)',
      '',
      `Wall time from process start to a settled tree and exit, ${RUNS} runs each, empty \`DSH_HOME\` (the checkout's launcher: the bundle in \`apps/cli/pkg\` when fresh, else \`dist\`).`,
      '',
      '| command | median | p90 | vs baseline |',
      '|---|---|---|---|',
      ...rows,
      '',
      `One-shot \`dsh "say hi"\` against \`@dsh/llm-mock-server\` (one instant text reply): from spawn to the model request's arrival at the server, and to exit; median of ${FIRST_REQUEST_RUNS} runs each after one warm-up, the two launchers alternating. "bundled" is the launcher \`npm pack\` ships (\`scripts/bundle-cli.mjs\`: ${bundle.plugins} plugins as lazy chunks, built in ${(bundle.ms / 1000).toFixed(1)} s).`,
      '',
      '| launcher | first request (median) | first request (p90) | exit (median) | CPU user+sys, whole run (median) |',
      '|---|---|---|---|---|',
      oneShot('checkout (`apps/cli/bin/dsh.js`: `apps/cli/pkg` when fresh, else `dist`)', before),
      oneShot('bundled (`bin/dsh.js` of the packed `dsh`)', after),
      '',
      `The checkout's launcher takes ${(before.request.median / after.request.median).toFixed(2)}× the packed one's time to the first request and ${(before.cpu.median / after.cpu.median).toFixed(2)}× its CPU per run (target: within 10 %; 1.5× and 1.7× in the last run from \`dist\`, 2026-12-02). Compare the baseline row with \`node -e 0\` on an idle machine (~60 ms): when it is far above, the machine was busy and wall times are inflated; the CPU column is the steadier figure.`,
    ].join('\n')
  } finally {
    await llm.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
    rmSync(packaged, { recursive: true, force: true })
  }
}
