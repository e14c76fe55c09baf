// Boot-to-settled time of each profile: `dsh --profile <p> --check` mounts the whole tree, waits until it
// settles, lists the rows and exits. Baseline: `node -e 0` (the cost of starting Node at all).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ms, summarize } from '../stats.mjs'

const repo = join(fileURLToPath(import.meta.url), '../../..')
const RUNS = 15

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

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-boot-'))
  const env = { ...process.env, DSH_HOME: home }
  try {
    const baseline = time(['-e', '0'], env)
    const rows = [`| \`node -e 0\` (baseline) | ${ms(baseline.median)} | ${ms(baseline.p90)} | 1.0× |`]
    for (const profile of ['headless', 'web', 'sdk', 'acp']) {
      const s = time([join(repo, 'apps/cli/bin/dsh.js'), '--profile', profile, '--check'], env)
      rows.push(`| \`dsh --profile ${profile} --check\` | ${ms(s.median)} | ${ms(s.p90)} | ${(s.median / baseline.median).toFixed(1)}× |`)
    }
    return [
      '## Boot (bench/boot)',
      '',
      `Wall time from process start to a settled tree and exit, ${RUNS} runs each, empty \`DSH_HOME\`.`,
      '',
      '| command | median | p90 | vs baseline |',
      '|---|---|---|---|',
      ...rows,
    ].join('\n')
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
